// Identity sources: trusted headers, hashed secrets and the client address behind proxies.
#include "ratelimitd/policy/identity.hpp"

#include "ratelimitd/policy/validate.hpp"
#include "ratelimitd/core/hmac_sha256.hpp"
#include "ratelimitd/policy/cidr.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace ratelimitd::policy {
namespace {

// Longer than any address with brackets and port; anything longer is not an address.
constexpr std::size_t max_address_text = 64;

std::string_view trim(std::string_view s) noexcept {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t");
    return s.substr(first, last - first + 1);
}

bool equals_ci(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               const auto lx = (x >= 'A' && x <= 'Z') ? static_cast<char>(x - 'A' + 'a') : x;
               const auto ly = (y >= 'A' && y <= 'Z') ? static_cast<char>(y - 'A' + 'a') : y;
               return lx == ly;
           });
}

bool all_digits(std::string_view s) noexcept {
    return !s.empty() && s.size() <= 5 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

/// The address part of "host", "host:port", "[v6]" or "[v6]:port"; empty when malformed.
std::string_view strip_port(std::string_view s) noexcept {
    if (s.starts_with('[')) {
        const auto close = s.find(']');
        if (close == std::string_view::npos) return {};
        const auto rest = s.substr(close + 1);
        if (!rest.empty() && !(rest.front() == ':' && all_digits(rest.substr(1)))) return {};
        return s.substr(1, close - 1);
    }
    const auto colons = std::count(s.begin(), s.end(), ':');
    if (colons == 1) {  // IPv4 with a port; a bare IPv6 address has at least two colons
        const auto colon = s.find(':');
        if (!all_digits(s.substr(colon + 1))) return {};
        return s.substr(0, colon);
    }
    return s;
}

/// Whether `s` is an IPv4 address as inet_pton reads one and inet_ntop writes it: four
/// decimal numbers 0..255 without leading zeros, joined by '.'. Such text is its own
/// canonical form, so the common case needs neither call (nor inet_ntop's sprintf).
bool is_canonical_ipv4(std::string_view s) noexcept {
    int parts = 0;
    std::size_t i = 0;
    while (true) {
        const std::size_t start = i;
        unsigned value = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 3) {
            value = value * 10 + static_cast<unsigned>(s[i++] - '0');
        }
        const std::size_t digits = i - start;
        if (digits == 0 || value > 255 || (digits > 1 && s[start] == '0')) return false;
        if (++parts == 4) return i == s.size();
        if (i >= s.size() || s[i] != '.') return false;
        ++i;
    }
}

/// The two lower-case hex digits of every byte value.
constexpr auto hex_pairs = [] {
    constexpr std::string_view digits = "0123456789abcdef";
    std::array<std::array<char, 2>, 256> pairs{};
    for (std::size_t b = 0; b < pairs.size(); ++b) pairs[b] = {digits[b >> 4], digits[b & 0x0f]};
    return pairs;
}();

bool is_trusted(const std::vector<Cidr>& trusted, std::string_view ip) noexcept {
    return std::any_of(trusted.begin(), trusted.end(),
                       [&](const Cidr& net) { return cidr_contains(net, ip); });
}

/// The single value of a header, trimmed; nullopt when absent, empty or sent more than once
/// (two values could come from two different hops, and picking one would let the client choose).
std::optional<std::string_view> single_value(const IdentityInput& in, std::string_view name) {
    if (!in.headers) return std::nullopt;
    const auto values = in.headers(name);
    if (values.size() != 1) return std::nullopt;
    const auto v = trim(values.front());
    if (v.empty()) return std::nullopt;
    return v;
}

/// The client named by X-Forwarded-For, read from the right (the entries our trusted proxies
/// appended) to the first entry that is not a trusted proxy. nullopt when the header is
/// absent or an entry on that walk is not an address.
std::optional<std::string> from_forwarded_for(const std::vector<Cidr>& trusted, const IdentityInput& in) {
    if (!in.headers) return std::nullopt;
    std::vector<std::string_view> entries;
    // Several header lines are one list, in order (RFC 9110 §5.3).
    for (const auto line : in.headers("X-Forwarded-For")) {
        std::string_view rest = line;
        while (true) {
            const auto comma = rest.find(',');
            entries.push_back(trim(rest.substr(0, comma)));
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    }
    std::optional<std::string> leftmost;
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
        auto ip = canonical_ip(*it);
        if (!ip) return std::nullopt;  // "unknown", garbage: nothing left of it can be believed
        if (!is_trusted(trusted, *ip)) return ip;
        leftmost = std::move(ip);
    }
    return leftmost;  // every hop is a trusted proxy: the first one is the client
}

}  // namespace

TenantText hash_identity(std::string_view secret, std::string_view value) {
    // The secret changes only on a reload: each thread keeps the keyed state of the last one
    // it hashed under, so a call costs two SHA-256 blocks and no allocation for the HMAC.
    thread_local std::string keyed_secret;
    thread_local std::optional<HmacSha256> keyed;
    if (!keyed || keyed_secret != secret) {
        keyed.emplace(secret);
        keyed_secret.assign(secret);
    }
    const HmacSha256::Digest digest = keyed->digest(value);
    constexpr std::string_view prefix = "key:";
    static_assert(prefix.size() + 2 * hashed_identity_bytes <= TenantText::inline_capacity);
    // Digits written straight into the answer, held in place, two per byte from a table: no
    // allocation, no call per digit.
    TenantText out;
    out.resize(prefix.size() + 2 * hashed_identity_bytes);
    char* p = std::copy(prefix.begin(), prefix.end(), out.data());
    for (std::size_t i = 0; i < hashed_identity_bytes; ++i, p += 2) std::memcpy(p, hex_pairs[digest[i]].data(), 2);
    return out;
}

std::optional<std::string> canonical_ip(std::string_view text) {
    text = trim(text);
    if (text.empty() || text.size() > max_address_text) return std::nullopt;
    const std::string_view addr = strip_port(text);
    if (addr.empty()) return std::nullopt;

    if (is_canonical_ipv4(addr)) return std::string(addr);
    char buf[max_address_text + 1];
    std::memcpy(buf, addr.data(), addr.size());
    buf[addr.size()] = '\0';
    unsigned char bytes[16];
    char out[INET6_ADDRSTRLEN];
    if (addr.find(':') == std::string_view::npos) {
        if (inet_pton(AF_INET, buf, bytes) != 1) return std::nullopt;
        return std::string(inet_ntop(AF_INET, bytes, out, sizeof out));
    }
    if (inet_pton(AF_INET6, buf, bytes) != 1) return std::nullopt;
    static constexpr unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(bytes, v4_mapped, sizeof v4_mapped) == 0) {
        // A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d: the same client either way.
        return std::string(inet_ntop(AF_INET, bytes + 12, out, sizeof out));
    }
    return std::string(inet_ntop(AF_INET6, bytes, out, sizeof out));
}

std::optional<std::string> address_tenant(std::string_view canonical, const ClientIpPrefixes& prefixes) {
    if (canonical.empty() || canonical.size() > max_address_text) return std::nullopt;
    if (prefixes.ipv4 >= 32 && is_canonical_ipv4(canonical)) return "ip:" + std::string(canonical);
    char buf[max_address_text + 1];
    std::memcpy(buf, canonical.data(), canonical.size());
    buf[canonical.size()] = '\0';
    const bool v6 = canonical.find(':') != std::string_view::npos;
    unsigned char bytes[16];
    if (inet_pton(v6 ? AF_INET6 : AF_INET, buf, bytes) != 1) return std::nullopt;

    const int full = v6 ? 128 : 32;
    const int len = std::clamp(v6 ? prefixes.ipv6 : prefixes.ipv4, 0, full);
    if (len == full) return "ip:" + std::string(canonical);
    for (int bit = len; bit < full; ++bit) {
        bytes[bit / 8] &= static_cast<unsigned char>(~(0x80 >> (bit % 8)));
    }
    char out[INET6_ADDRSTRLEN];
    return "ip:" + std::string(inet_ntop(v6 ? AF_INET6 : AF_INET, bytes, out, sizeof out)) + "/" +
           std::to_string(len);
}

std::string client_ip_tenant(const std::vector<Cidr>& trusted, const IdentityInput& in,
                             const ClientIpPrefixes& prefixes) {
    // The usual peer: an IPv4 address in canonical form, kept whole, not a trusted proxy. It is
    // its own canonical_ip and address_tenant is "ip:" and it: one string, built once.
    if (const std::string_view bare = trim(in.peer);
        prefixes.ipv4 >= 32 && is_canonical_ipv4(bare) && !is_trusted(trusted, bare)) {
        std::string tenant;
        tenant.reserve(3 + bare.size());
        tenant.append("ip:").append(bare);
        return tenant;
    }
    const auto tenant_of = [&](const std::string& ip) {
        auto tenant = address_tenant(ip, prefixes);
        return tenant ? std::move(*tenant) : "ip:" + ip;
    };
    // The socket always gives an address; "unknown" only for callers that have none (tests).
    const std::string peer = canonical_ip(in.peer).value_or("unknown");
    if (!is_trusted(trusted, peer)) return tenant_of(peer);  // headers from anyone else are forgeable
    if (const auto real = single_value(in, "X-Real-IP")) {
        if (auto ip = canonical_ip(*real)) return tenant_of(*ip);
    }
    if (auto ip = from_forwarded_for(trusted, in)) return tenant_of(*ip);
    return tenant_of(peer);
}

std::optional<TenantText> identify_with(const IdentitySource& source, const Registry& reg,
                                        const IdentityInput& in, std::string_view secret) {
    if (source.kind == IdentitySource::Kind::client_ip) {
        return client_ip_tenant(reg.trusted_proxies, in, source.prefixes);
    }

    const auto value = single_value(in, source.header);
    if (!value) return std::nullopt;
    if (source.hash) {
        std::string_view token = *value;
        // "Bearer <token>" (RFC 6750): the scheme is not part of the secret.
        if (equals_ci(source.header, "Authorization") && token.size() >= 6 &&
            equals_ci(token.substr(0, 6), "Bearer") && (token.size() == 6 || token[6] == ' ' || token[6] == '\t')) {
            token = trim(token.substr(6));
            if (token.empty()) return std::nullopt;
        }
        return hash_identity(secret, token);
    }
    // A plain header is an id set by an earlier, trusted step: it must be a tenant as is,
    // and may not pose as an address or a hashed secret.
    if (!policy::validate_tenant(*value)) return std::nullopt;
    if (value->starts_with("ip:") || value->starts_with("key:")) return std::nullopt;
    return TenantText(*value);
}

TenantText identify(const Registry& reg, const std::optional<std::string>& source_name,
                    const IdentityInput& in, std::string_view secret) {
    if (source_name) {
        if (*source_name != client_ip_identity) {
            for (const auto& src : reg.identity) {
                if (src.name != *source_name) continue;
                if (auto tenant = identify_with(src, reg, in, secret)) return std::move(*tenant);
                break;
            }
        }
        return client_ip_tenant(reg.trusted_proxies, in, reg.client_ip);
    }
    for (const auto& src : reg.identity) {
        if (auto tenant = identify_with(src, reg, in, secret)) return std::move(*tenant);
    }
    return client_ip_tenant(reg.trusted_proxies, in, reg.client_ip);
}

bool uses_hashed_identity(const Registry& reg) noexcept {
    return std::any_of(reg.identity.begin(), reg.identity.end(),
                       [](const IdentitySource& s) { return s.hash; });
}

}  // namespace ratelimitd::policy
