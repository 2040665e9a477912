// envoyproxy/ratelimit's variables as Go reads them (strconv,
// time.ParseDuration), so a value it accepts is accepted here and one it
// refuses is refused here too.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ratelimitd::erl {

/// Go's strconv.ParseBool: 1 t T TRUE true True, 0 f F FALSE false False; else
/// nothing.
std::optional<bool> parse_go_bool(std::string_view text) noexcept;

/// A whole number with an optional sign (strconv.ParseInt, base 10); else
/// nothing.
std::optional<std::int64_t> parse_go_int(std::string_view text) noexcept;

/// A decimal number ("0.8", "1", "-2.5e3"); else nothing.
std::optional<double> parse_go_number(std::string_view text) noexcept;

/// Go's time.ParseDuration ("300ms", "1h30m", "1.5s", "0"), in whole
/// milliseconds (rounded down); negative durations and anything else: nothing.
std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text) noexcept;

}  // namespace ratelimitd::erl
