// Calendar periods (minute .. year) at a fixed UTC offset, in plain integer arithmetic: the
// embedded store's half of `align: calendar`. lua/fixed_window.lua computes the same numbers
// from Redis TIME with the same formulas (Redis Lua has no os.date), so both stores agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ratelimitd {

/// The spans a calendar-aligned window may have (`window:` of a policy with `align: calendar`).
enum class CalendarUnit { minute, hour, day, week, month, year };

/// The spelling in config files and in script arguments: "1m", "1h", "1d", "1w", "1mo", "1y".
std::string_view to_string(CalendarUnit u) noexcept;

/// The unit a config file names ("1mo"), or nothing.
std::optional<CalendarUnit> calendar_unit_named(std::string_view name) noexcept;

/// `utc_offset: "+02:00"` as minutes east of UTC (-14:00 .. +14:00, minutes 00..59), or
/// nothing when the text is not of the form [+-]HH:MM.
std::optional<std::int32_t> parse_utc_offset(std::string_view text) noexcept;

/// One period of a calendar: [start_ms, end_ms), epoch milliseconds (UTC).
struct CalendarPeriod {
    std::int64_t start_ms = 0;
    std::int64_t end_ms = 0;
};

/// The period of `unit` holding `now_ms`, on the wall clock `offset_minutes` east of UTC.
/// Weeks are ISO weeks (they start on Monday); months and years follow the Gregorian calendar.
CalendarPeriod calendar_period(CalendarUnit unit, std::int32_t offset_minutes, std::int64_t now_ms) noexcept;

/// Days since 1970-01-01 of the Gregorian date y-m-d (m 1..12, d 1..31).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept;

/// The Gregorian date of `days` since 1970-01-01.
struct CivilDate {
    std::int64_t year = 1970;
    unsigned month = 1;
    unsigned day = 1;
};
CivilDate civil_from_days(std::int64_t days) noexcept;

}  // namespace ratelimitd
