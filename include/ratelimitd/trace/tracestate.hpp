// The W3C `tracestate` header (Trace Context Level 1, §3.3): vendors' key=value pairs that a
// participant passes on. We only check it and carry it: an invalid header is dropped whole
// (§3.3.1.1 lets a participant discard it), never an error.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::trace {

/// At most 32 list members (§3.3.1.1); a longer header is dropped, not truncated.
inline constexpr std::size_t tracestate_max_members = 32;
/// Bounds what one header can make us hold and forward: 32 members of the longest legal key and
/// value would be 16 KiB; the spec asks for at least 512 characters to be passed on (§3.3.1.5).
inline constexpr std::size_t tracestate_max_bytes = 512;

/// The header's members joined with ',' (optional white space and empty members removed), or
/// nullopt when it is over the bounds or any member breaks the grammar or repeats a key.
[[nodiscard]] std::optional<std::string> normalize_tracestate(std::string_view header);

}  // namespace ratelimitd::trace
