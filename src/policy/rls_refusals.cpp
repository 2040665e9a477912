// The rows of rls_refusals.hpp: each the proxy's doing, as Envoy's rate limit filter and its
// actions build a call.
#include "ratelimitd/policy/rls_refusals.hpp"

namespace ratelimitd::policy {
namespace {

constexpr RlsRefusal rows[] = {
    {"an empty domain", "the proxy: its rate limit filter's `domain` (config)"},
    {"a domain over 1024 bytes", "the proxy: its rate limit filter's `domain` (config)"},
    {"no descriptors", "the proxy: Envoy sends no call when no descriptor was produced"},
    {"more than 64 descriptors", "the proxy: one descriptor per `rate_limits` entry of a route (config)"},
    {"a descriptor without entries", "the proxy: every action adds one entry, an action that does not apply drops "
                                     "its descriptor"},
    {"an empty entry key", "the proxy: an action's `descriptor_key` or its fixed key (config)"},
    {"an entry key over 1024 bytes", "the proxy: an action's `descriptor_key` (config)"},
    {"a `limit` override whose unit is not 1..7", "the proxy: Envoy sends only RateLimitUnit's values"},
};

}  // namespace

std::span<const RlsRefusal> rls_refusals() noexcept { return rows; }

}  // namespace ratelimitd::policy
