// A span's identity as W3C Trace Context carries it: the trace, the span, the sampled flag and the
// vendors' tracestate, with no I/O and no clock.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace ratelimitd::trace {

/// 16 bytes; all zero is invalid (W3C Trace Context §3.2.2.3).
using TraceId = std::array<std::uint8_t, 16>;
/// 8 bytes; all zero is invalid (§3.2.2.4).
using SpanId = std::array<std::uint8_t, 8>;

/// The one trace flag the spec defines: the caller recorded (sampled) its span.
inline constexpr std::uint8_t sampled_flag = 0x01;

template <std::size_t N>
[[nodiscard]] bool is_zero(const std::array<std::uint8_t, N>& id) noexcept {
    return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}

/// A remote parent read from `traceparent` (+ `tracestate`), or a span of ours.
struct SpanContext {
    TraceId trace_id{};
    SpanId span_id{};
    std::uint8_t flags = 0;
    /// Passed on unchanged (already validated); empty when absent or invalid.
    std::string tracestate;

    [[nodiscard]] bool sampled() const noexcept { return (flags & sampled_flag) != 0; }
};

}  // namespace ratelimitd::trace
