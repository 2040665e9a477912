// New trace and span ids: random, never all zero (W3C Trace Context §3.2.2.3/4).
#pragma once

#include "ratelimitd/trace/span_context.hpp"

namespace ratelimitd::trace {

/// From a per-thread generator seeded by std::random_device: no lock on the check path, and the
/// trace id's low bytes are uniform, which the ratio sampler needs (W3C Level 2's random flag).
[[nodiscard]] TraceId new_trace_id() noexcept;
[[nodiscard]] SpanId new_span_id() noexcept;
/// A trace id whose last 8 bytes are `low` (big-endian) and whose first 8 are drawn now: the
/// ratio sampler reads only the last 8, so a root's fate is known from one draw and the rest of
/// its id is drawn only when it is sampled.
[[nodiscard]] TraceId trace_id_ending_with(std::uint64_t low) noexcept;
/// One draw of the thread's generator.
[[nodiscard]] std::uint64_t random_word() noexcept;

}  // namespace ratelimitd::trace
