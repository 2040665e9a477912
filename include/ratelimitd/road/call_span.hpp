// What a decided call tells a trace: the ratelimit.* attributes every door's server span carries,
// read from the call after the road decided it (no door repeats them).
#pragma once

#include "ratelimitd/road/call.hpp"
#include "ratelimitd/trace/span.hpp"

#include <string_view>

namespace ratelimitd::road {

/// Adds, for a decided call: ratelimit.policy, ratelimit.verdict (allowed | denied),
/// ratelimit.algorithm (the reported window's limit's), ratelimit.limit and ratelimit.remaining
/// (the reported window's, when the store answered), ratelimit.cost, ratelimit.store (`store`),
/// ratelimit.degraded, ratelimit.fail_mode (allow | deny), ratelimit.cache_hit and, when a shadow
/// limit would have denied, ratelimit.shadow_denied. A call refused as bad input gets
/// ratelimit.problem (the error's name) and nothing else. Names no tenant, key or identity.
void add_call_attributes(trace::Span& span, const Call& call, std::string_view store);

}  // namespace ratelimitd::road
