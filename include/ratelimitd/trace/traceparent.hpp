// The W3C `traceparent` header (Trace Context Level 1, §3.2): version-traceid-parentid-flags in
// lower-case hex. Parsing never fails loudly: a header that does not follow the spec is ignored
// and the check starts a new trace (§3.2.2.1, "restart the trace"), it is never an error.
#pragma once

#include "ratelimitd/trace/span_context.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::trace {

/// The parent a header names, or nullopt when it is absent or malformed: version ff, upper-case
/// or non-hex digits, an all-zero trace or parent id, a version 00 header of other than 55
/// characters, or a later version whose extra fields are not after a '-'.
[[nodiscard]] std::optional<SpanContext> parse_traceparent(std::string_view header) noexcept;

/// "00-<trace id>-<span id>-<flags>", 55 characters: what we send on (only version 00 is written,
/// and of the flags only the sampled bit, which is the only one version 00 defines).
[[nodiscard]] std::string format_traceparent(const TraceId& trace_id, const SpanId& span_id, bool sampled);

}  // namespace ratelimitd::trace
