// Who a /v1/auth request is: the tenant named by the registry's identity sources.
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/tenant_text.hpp"

#include <boost/container/small_vector.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::policy {

/// The values of one header: a header comes once or twice, so they are kept inline (an
/// /v1/auth call made a vector, an allocation, for every header it looked up).
using HeaderList = boost::container::small_vector<std::string_view, 2>;

/// Every value of one request header, in arrival order (empty when absent). Supplied by the
/// HTTP layer so this module needs no HTTP library.
using HeaderValues = std::function<HeaderList(std::string_view name)>;

/// What identification needs from a request.
struct IdentityInput {
    HeaderValues headers;
    std::string_view peer;  ///< the direct TCP peer's address, no port, no brackets
};

/// Bytes of HMAC-SHA-256 kept (as 32 hex digits) in a hashed tenant: 128 bits.
inline constexpr std::size_t hashed_identity_bytes = 16;

/// "key:" + the first 32 hex digits of HMAC-SHA-256(secret, value). The secret never leaves
/// this function in any form, and the result is a valid tenant.
[[nodiscard]] TenantText hash_identity(std::string_view secret, std::string_view value);

/// The canonical text of an IP address, or nullopt when `text` is not one: IPv6 compressed
/// and lower-case, an IPv4-mapped IPv6 address as plain IPv4. Accepts an optional port
/// ("1.2.3.4:80", "[::1]:80") and brackets, as X-Forwarded-For entries carry them. One
/// address therefore always makes one tenant, however it was spelled.
[[nodiscard]] std::optional<std::string> canonical_ip(std::string_view text);

/// The tenant of a client address (as canonical_ip gives it) grouped by `prefixes`:
/// "ip:<address>" at the full length (/32, /128), else "ip:<network>/<length>" with the host
/// bits cleared ("ip:2001:db8:1:2::/64", "ip:10.1.0.0/16"). nullopt when `canonical` is not
/// an address.
[[nodiscard]] std::optional<std::string> address_tenant(std::string_view canonical,
                                                        const ClientIpPrefixes& prefixes);

/// The client address rule: when `peer` is inside `trusted`, the address in X-Real-IP (one
/// valid address), else the right-most X-Forwarded-For entry that is not itself trusted (the
/// left-most when all are); otherwise, and whenever those headers are absent or malformed,
/// the peer itself. Returns address_tenant() of that address under `prefixes`. Trust is
/// always decided on the full address, never on its network.
[[nodiscard]] std::string client_ip_tenant(const std::vector<Cidr>& trusted, const IdentityInput& in,
                                           const ClientIpPrefixes& prefixes = {});

/// The tenant one source names, or nullopt when it names nobody: a header source needs
/// exactly one non-empty value (a header sent twice is ambiguous, so it is skipped); a plain
/// header's value must be a valid tenant not starting with "ip:" or "key:" (those name
/// addresses and hashed secrets); a hashed header gives hash_identity(secret, value), where
/// for `Authorization` a "Bearer <token>" value (scheme in any case) contributes only the
/// token. A client_ip source always names the client address, grouped by its own prefixes.
[[nodiscard]] std::optional<TenantText> identify_with(const IdentitySource& source,
                                                      const Registry& reg,
                                                      const IdentityInput& in,
                                                      std::string_view secret);

/// The tenant for one route limit: the named source (`client_ip` is always the client
/// address), or with no name the registry's identity sources in order; when none names the
/// request, the client address grouped by the registry's `client_ip` prefixes. Never fails.
[[nodiscard]] TenantText identify(const Registry& reg, const std::optional<std::string>& source_name,
                                  const IdentityInput& in, std::string_view secret);

/// True when some identity source hashes its value (so a hash secret matters).
[[nodiscard]] bool uses_hashed_identity(const Registry& reg) noexcept;

}  // namespace ratelimitd::policy
