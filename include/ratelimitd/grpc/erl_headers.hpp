// envoyproxy/ratelimit's response headers (LIMIT_RESPONSE_HEADERS_ENABLED): limit, remaining
// and reset of the one descriptor its service picks.
#pragma once

#include "ratelimitd/grpc/response_headers.hpp"
#include "ratelimitd/policy/rls_plan.hpp"

#include "envoy/service/ratelimit/v3/rls.pb.h"

#include <cstdint>

namespace ratelimitd::rls {

/// Adds to `out.response_headers_to_add` the three fields envoyproxy/ratelimit adds, named by
/// `names`, for the descriptor it reports: the last enforced one that says OVER_LIMIT, else
/// the first with the least limit_remaining among those with a current_limit (a quota
/// descriptor over its limit competes only by its remaining). Values: requests_per_unit,
/// limit_remaining, and the seconds until its unit's window ends at `now_s` (its
/// CalculateReset: unit - now % unit). Nothing when no descriptor has a current_limit.
/// Reads `out.statuses` as build_response filled them. Pure.
void add_erl_headers(const policy::RlsPlan& plan, std::int64_t now_s, const ErlHeaderNames& names,
                     envoy::service::ratelimit::v3::RateLimitResponse& out);

}  // namespace ratelimitd::rls
