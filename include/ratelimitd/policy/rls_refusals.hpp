// The only inputs on which the Envoy rate limit service answers an error (INVALID_ARGUMENT),
// and who can send each: the proxy itself, never its clients. Envoy admits a request whose
// rate-limit call errors (failure_mode_deny is off by default), so everything a client can
// shape is decided instead (docs/security.md, the door table).
#pragma once

#include <span>
#include <string_view>

namespace ratelimitd::policy {

/// One refusal: what the call holds, and who can make it hold that.
struct RlsRefusal {
    std::string_view input;
    std::string_view cause;
};

/// Every refusal of ShouldRateLimit (and of ERL mode's /json), in the order the codec and the
/// planner check them. A new refusal is a row here, shown in docs/security.md and tested per
/// row (tests/unit/grpc/rls_refusals_test.cpp).
std::span<const RlsRefusal> rls_refusals() noexcept;

}  // namespace ratelimitd::policy
