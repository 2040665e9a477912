// Gregorian arithmetic on day numbers. The calendar repeats every 400 years (146097 days), so
// dates are counted in 400-year eras that start on March 1st: the leap day is then the last
// day of its year, and the month lengths of an era year follow one formula (153-day blocks of
// five months). lua/fixed_window.lua writes the same steps in Lua.
#include "ratelimitd/core/calendar.hpp"

#include <array>
#include <cctype>

namespace ratelimitd {
namespace {

constexpr std::int64_t ms_per_minute = 60'000;
constexpr std::int64_t ms_per_day = 86'400'000;
constexpr std::int64_t days_per_era = 146'097;

constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) {  // b > 0
    return a / b - ((a % b) < 0 ? 1 : 0);
}

constexpr std::array<std::string_view, 6> unit_names = {"1m", "1h", "1d", "1w", "1mo", "1y"};

// Periods of a fixed length, on the local (offset) time line.
CalendarPeriod fixed(std::int64_t local_ms, std::int64_t length) {
    const std::int64_t start = floor_div(local_ms, length) * length;
    return {start, start + length};
}

}  // namespace

std::string_view to_string(CalendarUnit u) noexcept { return unit_names[static_cast<std::size_t>(u)]; }

std::optional<CalendarUnit> calendar_unit_named(std::string_view name) noexcept {
    for (std::size_t i = 0; i < unit_names.size(); ++i) {
        if (unit_names[i] == name) return static_cast<CalendarUnit>(i);
    }
    return std::nullopt;
}

std::optional<std::int32_t> parse_utc_offset(std::string_view t) noexcept {
    const auto digit = [&t](std::size_t i) { return std::isdigit(static_cast<unsigned char>(t[i])) != 0; };
    if (t.size() != 6 || (t[0] != '+' && t[0] != '-') || t[3] != ':') return std::nullopt;
    if (!digit(1) || !digit(2) || !digit(4) || !digit(5)) return std::nullopt;
    const int hours = (t[1] - '0') * 10 + (t[2] - '0');
    const int minutes = (t[4] - '0') * 10 + (t[5] - '0');
    // The offsets in use run from -12:00 to +14:00; anything past 14 hours is a typo.
    if (minutes > 59 || hours * 60 + minutes > 14 * 60) return std::nullopt;
    const std::int32_t total = hours * 60 + minutes;
    return t[0] == '-' ? -total : total;
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
    y -= m <= 2 ? 1 : 0;  // January and February belong to the previous March-based year
    const std::int64_t era = floor_div(y, 400);
    const std::int64_t year_of_era = y - era * 400;                                  // 0..399
    const std::int64_t month_from_march = m > 2 ? m - 3 : m + 9;                     // 0..11
    const std::int64_t day_of_year = (153 * month_from_march + 2) / 5 + d - 1;       // 0..365
    const std::int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * days_per_era + day_of_era - 719'468;  // 719468: days from 0000-03-01 to 1970-01-01
}

CivilDate civil_from_days(std::int64_t days) noexcept {
    days += 719'468;
    const std::int64_t era = floor_div(days, days_per_era);
    const std::int64_t day_of_era = days - era * days_per_era;  // 0..146096
    const std::int64_t year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;  // 0..399
    const std::int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    const std::int64_t month_from_march = (5 * day_of_year + 2) / 153;  // 0..11
    CivilDate out;
    out.day = static_cast<unsigned>(day_of_year - (153 * month_from_march + 2) / 5 + 1);
    out.month = static_cast<unsigned>(month_from_march < 10 ? month_from_march + 3 : month_from_march - 9);
    out.year = year_of_era + era * 400 + (out.month <= 2 ? 1 : 0);
    return out;
}

CalendarPeriod calendar_period(CalendarUnit unit, std::int32_t offset_minutes, std::int64_t now_ms) noexcept {
    const std::int64_t offset_ms = std::int64_t{offset_minutes} * ms_per_minute;
    const std::int64_t local = now_ms + offset_ms;
    CalendarPeriod p;
    switch (unit) {
    case CalendarUnit::minute: p = fixed(local, ms_per_minute); break;
    case CalendarUnit::hour: p = fixed(local, 60 * ms_per_minute); break;
    case CalendarUnit::day: p = fixed(local, ms_per_day); break;
    case CalendarUnit::week: {
        // 1970-01-01 was a Thursday: days + 3 counts from the Monday before it.
        const std::int64_t day = floor_div(local, ms_per_day);
        const std::int64_t monday = day - (day + 3 - floor_div(day + 3, 7) * 7);
        p = {monday * ms_per_day, (monday + 7) * ms_per_day};
        break;
    }
    case CalendarUnit::month:
    case CalendarUnit::year: {
        const CivilDate today = civil_from_days(floor_div(local, ms_per_day));
        const unsigned first_month = unit == CalendarUnit::month ? today.month : 1;
        const std::int64_t next_year = unit == CalendarUnit::year || today.month == 12 ? today.year + 1 : today.year;
        const unsigned next_month = unit == CalendarUnit::year ? 1 : today.month % 12 + 1;
        p = {days_from_civil(today.year, first_month, 1) * ms_per_day,
             days_from_civil(next_year, next_month, 1) * ms_per_day};
        break;
    }
    }
    // Back from the local time line to UTC.
    return {p.start_ms - offset_ms, p.end_ms - offset_ms};
}

}  // namespace ratelimitd
