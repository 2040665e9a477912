// service::Decision + policy::RlsPlan -> Envoy's RateLimitResponse.
#pragma once

#include "ratelimitd/grpc/response_headers.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/service/check_service.hpp"

#include "envoy/service/ratelimit/v3/rls.pb.h"

#include <cstdint>

namespace ratelimitd::rls {

/// Fills `out` for a decided call:
/// - overall_code: OVER_LIMIT when the decision denies (an enforced descriptor over its limit,
///   or a store failure that a fail-closed limit turns into a denial), or when the call has
///   quota descriptors (PlannedLimit::quota) and every one of them says OVER_LIMIT, as
///   envoyproxy/ratelimit's quota_mode decides; else OK (always OK under envoy_shadow_mode);
/// - one status per request descriptor, in order: no match / unlimited answer OK with no
///   current_limit; a limited one carries current_limit from the plan and, from its limit's
///   windows (Decision::owner), limit_remaining and duration_until_reset (for a window aligned
///   to the unit: until its end, `now_s` being the epoch seconds of now, as
///   envoyproxy/ratelimit reports it); it is OVER_LIMIT only
///   when one of those windows denied and the rule is not shadow_mode (shadow answers OK; a
///   quota one says OVER_LIMIT);
/// - response_headers_to_add: RateLimit-Policy and RateLimit for every window decided; with
///   HeaderSet::ietf_and_x also the X-RateLimit-* fields and Retry-After, with the values
///   an HTTP check answer carries (the reported window: the first that denied, else the one
///   with the least remaining); with HeaderSet::erl envoyproxy/ratelimit's three
///   (add_erl_headers); with HeaderSet::none nothing.
/// Pure: reads its arguments, writes `out` only.
void build_response(const service::Decision& decision, const policy::RlsPlan& plan, std::int64_t now_s,
                    envoy::service::ratelimit::v3::RateLimitResponse& out,
                    const ResponseHeaders& headers = HeaderSet::ietf);

/// Fills `out` for a call whose plan is never_admitted, decided without the store: OVER_LIMIT;
/// each never_admitted descriptor OVER_LIMIT with its current_limit, limit_remaining 0 and
/// duration_until_reset until its window starts over (an aligned window's end, else one unit);
/// the other limited descriptors OK with their current_limit and no numbers (not decided, as
/// behind any other denial); no match / unlimited OK. No response headers: no window was
/// read. Pure: reads its arguments, writes `out` only.
void build_never_admitted_response(const policy::RlsPlan& plan, std::int64_t now_s,
                                   envoy::service::ratelimit::v3::RateLimitResponse& out);

/// SHADOW_MODE (RlsPlan::shadow_all) let `response` through OK while a descriptor says
/// OVER_LIMIT: envoyproxy/ratelimit's global_shadow_mode stat.
[[nodiscard]] bool shadowed_over(const envoy::service::ratelimit::v3::RateLimitResponse& response,
                                 const policy::RlsPlan& plan);

}  // namespace ratelimitd::rls
