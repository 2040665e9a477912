// Fuzz target: what /v1/auth reads from untrusted headers: addresses, X-Forwarded-For walks,
// bearer tokens and the path normalisation routes are matched on.
#include "ratelimitd/policy/validate.hpp"
#include "ratelimitd/policy/cidr.hpp"
#include "ratelimitd/policy/identity.hpp"
#include "ratelimitd/policy/path.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

using namespace ratelimitd::policy;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // Fields separated by '\n': peer, X-Real-IP, X-Forwarded-For, Authorization, URI.
    std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string_view> f;
    while (f.size() < 4) {
        const auto nl = text.find('\n');
        f.push_back(text.substr(0, nl));
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    }
    f.push_back(text);

    static const Registry reg = [] {
        Registry r;
        r.trusted_proxies = {*parse_cidr("10.0.0.0/8"), *parse_cidr("::1"), *parse_cidr("127.0.0.1")};
        IdentitySource bearer;
        bearer.header = "Authorization";
        bearer.hash = true;
        bearer.name = "bearer";
        IdentitySource plain;
        plain.header = "X-Real-IP";  // a plain source over attacker text too
        r.identity = {bearer, plain};
        return r;
    }();
    IdentityInput in;
    in.peer = f[0];
    in.headers = [&f](std::string_view name) {
        ratelimitd::policy::HeaderList out;
        if (name == "X-Real-IP") out.push_back(f[1]);
        if (name == "X-Forwarded-For") out.push_back(f[2]);
        if (name == "Authorization") out.push_back(f[3]);
        return out;
    };

    // Whatever comes in, a tenant comes out that is valid as part of a Redis key.
    const std::string tenant = identify(reg, std::nullopt, in, "fuzz-secret-0123456789").str();
    if (!ratelimitd::policy::validate_tenant(tenant)) std::abort();
    if (!ratelimitd::policy::validate_tenant(client_ip_tenant(reg.trusted_proxies, in))) std::abort();
    if (auto ip = canonical_ip(f[1])) {
        if (canonical_ip(*ip) != ip) std::abort();  // canonical means a fixed point
    }
    const std::string path = normalize_path(f[4]);
    if (path.empty() || path.front() != '/' || path.find("//") != std::string::npos) std::abort();
    // Normalising twice changes nothing, unless decoding made new escapes or a '?'/'#' (which
    // matching cuts off anyway).
    if (path.find_first_of("%?#") == std::string::npos && normalize_path(path) != path) std::abort();
    return 0;
}
