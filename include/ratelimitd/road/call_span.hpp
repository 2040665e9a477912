// What a decided call tells a trace: the ratelimit.* attributes of every door's server span and
// of its store call's child span, read from the call after the road decided it (no door repeats
// them). Only the policy (or domain) and the verdict are on both: each span alone says whose
// call it was and how it ended; the numbers are the store span's.
#pragma once

#include "ratelimitd/road/call.hpp"
#include "ratelimitd/trace/span.hpp"

#include <chrono>
#include <string_view>

namespace ratelimitd::road {

/// Adds, for a decided call, what the door answered: ratelimit.policy, ratelimit.verdict
/// (allowed | denied) and, when a shadow limit would have denied, ratelimit.shadow_denied; the
/// numbers and how the store decided are the store span's (store_span). A call refused as bad
/// input gets ratelimit.problem (the error's name) and nothing else. Names no tenant, key or
/// identity.
void add_call_attributes(trace::Span& span, const Call& call);

/// The store call of a decided call, as a child of its door's server span `server`: from
/// `handed` (the door gave the call to the road) to `answered` (the road's answer), so the Redis
/// round trip or the embedded store's step, and the road's planning around it (microseconds).
/// Named "ratelimit.store <store>"; kind client for a store outside the process (Redis, with
/// db.system.name "redis"), internal for the embedded one. Attributes: ratelimit.store,
/// ratelimit.policy (or ratelimit.domain, as the server span names it), ratelimit.verdict,
/// ratelimit.algorithm, ratelimit.limit, ratelimit.remaining, ratelimit.cost, ratelimit.degraded,
/// ratelimit.fail_mode and ratelimit.cache_hit; a refused call (no store asked) has none.
/// Written into `span` (Tracer::start_child_span: a reused span keeps its storage).
void store_span(trace::Span& span, const trace::Span& server, const Call& call, std::string_view store,
                std::chrono::steady_clock::time_point handed, std::chrono::steady_clock::time_point answered);

}  // namespace ratelimitd::road
