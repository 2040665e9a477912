// Durations as written in config files: "500ms", "60s", "1m", "2h", "1d".
#pragma once

#include "ratelimitd/core/error.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace ratelimitd {

/// Parses a positive whole number followed by one of ms, s, m, h, d.
/// Fails with invalid_request and a detail such as
/// `expected a duration such as "500ms", "60s" or "1m", got "60"`. Never throws.
result<std::chrono::milliseconds> parse_duration(std::string_view text);

/// The shortest exact spelling of a duration: 60000ms -> "1m", 1500ms -> "1500ms".
std::string format_duration(std::chrono::milliseconds d);

}  // namespace ratelimitd
