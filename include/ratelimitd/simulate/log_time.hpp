// The timestamps access logs carry, read into Unix epoch milliseconds, and the one form the
// summary writes them in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::simulate {

/// nginx's $time_local: "02/Dec/2026:13:20:05 +0100". nullopt when it is not one.
std::optional<std::int64_t> parse_time_local(std::string_view text);

/// RFC 3339 / ISO 8601 as nginx's $time_iso8601 and most JSON logs write it:
/// "2026-12-02T13:20:05+01:00", "2026-12-02T13:20:05.123Z" (a space for the T is accepted).
/// nullopt when it is not one.
std::optional<std::int64_t> parse_iso8601(std::string_view text);

/// Epoch seconds with an optional fraction, as nginx's $msec writes it ("1764681605.123").
std::optional<std::int64_t> parse_epoch_seconds(std::string_view text);

/// Any of the above, tried in that order of likelihood for a string of that shape.
std::optional<std::int64_t> parse_any_time(std::string_view text);

/// RFC 3339 in UTC: "2026-12-02T13:20:05Z", with ".123" only when the milliseconds are not 0.
std::string format_rfc3339(std::int64_t epoch_ms);

}  // namespace ratelimitd::simulate
