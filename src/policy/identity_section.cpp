// `identity` and `trusted_proxies`: who a request is, and whose forwarded headers count.
#include "ratelimitd/policy/identity_section.hpp"

#include "ratelimitd/policy/validate.hpp"
#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/cidr.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::policy {
namespace {

using config::describe;

}  // namespace

void IdentitySection::read_identity(const Json& v, Registry& reg) const {
    if (v.is_null()) return;
    if (!v.is_array()) fail("identity", "expected a list of identity sources, got " + describe(v));
    const std::string shape =
        "expected exactly one of {header: NAME [, hash: true|false]} or {client_ip: true}";
    std::size_t i = 0;
    for (const auto& item : v) {
        const std::string path = join("identity", i++);
        if (!item.is_object()) fail(path, shape + ", got " + describe(item));
        check_keys(item, path, {"header", "hash", "client_ip", "ipv4_prefix", "ipv6_prefix", "name"});
        const Json* header = find(item, "header");
        const Json* client_ip = find(item, "client_ip");
        const Json* hash = find(item, "hash");
        if ((header == nullptr) == (client_ip == nullptr)) fail(path, shape);

        IdentitySource src;
        if (client_ip != nullptr) {
            if (hash != nullptr) fail(join(path, "hash"), "only allowed with header");
            if (!client_ip->is_boolean() || !client_ip->get<bool>()) {
                fail(join(path, "client_ip"), "expected true, got " + describe(*client_ip));
            }
            src.kind = IdentitySource::Kind::client_ip;
            src.prefixes = read_client_ip_prefixes(item, path);
        } else {
            for (const char* key : {"ipv4_prefix", "ipv6_prefix"}) {
                if (find(item, key) != nullptr) fail(join(path, key), "only allowed with client_ip: true");
            }
            const std::string header_path = join(path, "header");
            const std::string expected = "a header name such as X-Tenant-Id";
            src.header = need_string(*header, header_path, expected);
            // RFC 9110 token characters: anything else can never name a received header.
            const bool token =
                !src.header.empty() && src.header.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789!#$%&'*+-.^_`|~") == std::string::npos;
            if (!token) fail(header_path, "expected " + expected + ", got " + describe(*header));
            if (hash != nullptr) src.hash = need_bool(*hash, join(path, "hash"));
        }

        read_identity_name(item, path, reg, src);
        if (src.name == client_ip_identity) reg.client_ip = src.prefixes;
        reg.identity.push_back(std::move(src));
    }
}

void IdentitySection::read_identity_name(const Json& item, const std::string& path, const Registry& reg,
                                   IdentitySource& src) const {
    if (src.kind == IdentitySource::Kind::client_ip) src.name = client_ip_identity;
    if (const Json* name = find(item, "name")) {
        const std::string name_path = join(path, "name");
        const std::string expected = std::string("a name of ") + name_charset;
        std::string text = need_string(*name, name_path, expected);
        if (!policy::is_valid_policy_name(text)) {
            fail(name_path, "expected " + expected + ", got " + describe(*name));
        }
        if (text == client_ip_identity && src.kind != IdentitySource::Kind::client_ip) {
            fail(name_path, "\"client_ip\" is reserved for the client address");
        }
        src.name = std::move(text);
    }
    for (std::size_t j = 0; j < reg.identity.size(); ++j) {
        // Also the implicit "client_ip": two such sources could group addresses two ways.
        if (!src.name.empty() && reg.identity[j].name == src.name) {
            fail(join(path, "name"), quote(src.name) + " is already the name of " + join("identity", j));
        }
    }
}

ClientIpPrefixes IdentitySection::read_client_ip_prefixes(const Json& item, const std::string& path) const {
    namespace b = client_ip_bounds;
    ClientIpPrefixes p;
    if (const Json* v = find(item, "ipv4_prefix")) {
        p.ipv4 = static_cast<int>(need_int(*v, join(path, "ipv4_prefix"), b::ipv4_lo, b::ipv4_hi));
    }
    if (const Json* v = find(item, "ipv6_prefix")) {
        p.ipv6 = static_cast<int>(need_int(*v, join(path, "ipv6_prefix"), b::ipv6_lo, b::ipv6_hi));
    }
    return p;
}

void IdentitySection::read_trusted_proxies(const Json& v, Registry& reg) const {
    if (v.is_null()) return;
    const std::string expected =
        "an IPv4 or IPv6 address or CIDR such as \"10.0.0.0/8\" or \"::1/128\"";
    if (!v.is_array()) fail("trusted_proxies", "expected a list of CIDRs, got " + describe(v));
    std::size_t i = 0;
    for (const auto& item : v) {
        const std::string path = join("trusted_proxies", i++);
        const auto net =
            item.is_string() ? parse_cidr(item.get_ref<const std::string&>()) : std::nullopt;
        if (!net) fail(path, "expected " + expected + ", got " + describe(item));
        reg.trusted_proxies.push_back(*net);
    }
}

}  // namespace ratelimitd::policy
