// A descriptor value of any length made into one of bounded length: what a proxy's client
// sends (a header mapped by a request_headers action) is decided, never refused for its size.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// The longest value kept as sent: the bound ShouldRateLimit refused beyond before.
inline constexpr std::size_t max_kept_value_bytes = 4096;

/// The length of every bounded long value: the kept prefix, '#', 64 hex digits.
inline constexpr std::size_t bounded_value_bytes = max_kept_value_bytes + 1 + 64;

/// `value` itself when it holds at most max_kept_value_bytes; else its first
/// max_kept_value_bytes bytes, '#' and the lower-case hex SHA-256 of the whole value.
/// Why no collision: a bounded value is bounded_value_bytes long, longer than any value kept
/// as sent, so it never equals a short one; two long values share one only when their
/// SHA-256 digests do. The prefix is kept so that a prefix rule (`value: "abc*"`) matches a
/// long value as it matches the value sent; a pattern on the value's end sees the digest
/// instead (a rule's value is at most 1024 bytes, so no exact rule names a long value).
/// Never throws but for bad_alloc.
[[nodiscard]] std::string bounded_value(std::string_view value);

}  // namespace ratelimitd::policy
