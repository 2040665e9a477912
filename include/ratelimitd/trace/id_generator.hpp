// New trace and span ids: random, never all zero (W3C Trace Context §3.2.2.3/4).
#pragma once

#include "ratelimitd/trace/span_context.hpp"

namespace ratelimitd::trace {

/// From a per-thread generator seeded by std::random_device: no lock on the check path, and the
/// trace id's low bytes are uniform, which the ratio sampler needs (W3C Level 2's random flag).
[[nodiscard]] TraceId new_trace_id() noexcept;
[[nodiscard]] SpanId new_span_id() noexcept;

}  // namespace ratelimitd::trace
