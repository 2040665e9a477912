// calendar_period and the day arithmetic under it, around real dates. Every expected epoch
// value was computed independently (Python's datetime), not with the code under test.
#include "ratelimitd/core/calendar.hpp"

#include <gtest/gtest.h>

namespace {

using ratelimitd::calendar_period;
using ratelimitd::CalendarUnit;

void expect_period(CalendarUnit unit, std::int32_t offset, std::int64_t now, std::int64_t start,
                   std::int64_t end) {
    const auto p = calendar_period(unit, offset, now);
    EXPECT_EQ(p.start_ms, start) << "now " << now;
    EXPECT_EQ(p.end_ms, end) << "now " << now;
}

TEST(CalendarPeriod, MinuteHourDay) {
    const std::int64_t now = 1796144989123;  // 2026-12-01T17:09:49.123Z
    expect_period(CalendarUnit::minute, 0, now, 1796144940000, 1796145000000);
    expect_period(CalendarUnit::hour, 0, now, 1796144400000, 1796148000000);
    expect_period(CalendarUnit::day, 0, now, 1796083200000, 1796083200000 + 86'400'000);
}

TEST(CalendarPeriod, LeapFebruaryOf2024And2028) {
    expect_period(CalendarUnit::month, 0, 1709208000000, 1706745600000, 1709251200000);  // 2024-02-29
    expect_period(CalendarUnit::month, 0, 1835481599999, 1832976000000, 1835481600000);  // 2028-02-29 23:59:59.999
    expect_period(CalendarUnit::month, 0, 1835481600000, 1835481600000,                  // 2028-03-01: March
                  1835481600000 + 31LL * 86'400'000);
}

TEST(CalendarPeriod, Year2100IsNoLeapYear) {
    // 2100-02-28: February of 2100 has 28 days (divisible by 100, not by 400).
    expect_period(CalendarUnit::month, 0, 4107492000000, 4105123200000, 4107542400000);
    EXPECT_EQ(4107542400000 - 4105123200000, 28LL * 86'400'000);
}

TEST(CalendarPeriod, MonthEnds) {
    expect_period(CalendarUnit::month, 0, 1769846400000, 1767225600000, 1769904000000);  // 2026-01-31
    expect_period(CalendarUnit::month, 0, 1777590000000, 1775001600000, 1777593600000);  // 2026-04-30 23:00
}

TEST(CalendarPeriod, YearEndAndLeapYear) {
    expect_period(CalendarUnit::year, 0, 1798761599999, 1767225600000, 1798761600000);  // 2026-12-31 23:59:59.999
    expect_period(CalendarUnit::year, 0, 1735603200000, 1704067200000, 1735689600000);  // 2024-12-31 (366 days)
    EXPECT_EQ(1735689600000 - 1704067200000, 366LL * 86'400'000);
}

TEST(CalendarPeriod, IsoWeekCrossingTheYear) {
    // 2027-01-01 is a Friday: its ISO week began on Monday 2026-12-28.
    expect_period(CalendarUnit::week, 0, 1798804800000, 1798416000000, 1799020800000);
    // A Monday at midnight starts its own week.
    expect_period(CalendarUnit::week, 0, 1795996800000, 1795996800000, 1796601600000);
}

TEST(CalendarPeriod, OffsetsThatMoveTheDay) {
    const std::int64_t now = 1796077800000;  // 2026-11-30T22:30Z
    // +02:00: already 2026-12-01 00:30 there, so December at +02:00.
    expect_period(CalendarUnit::month, 120, now, 1796076000000, 1798754400000);
    // -05:00: still November there.
    expect_period(CalendarUnit::month, -300, now, 1793509200000, 1796101200000);
    // The day at +02:00 starts at 22:00Z.
    expect_period(CalendarUnit::day, 120, now, 1796076000000, 1796076000000 + 86'400'000);
}

TEST(CalendarDays, RoundTripEveryDayOfFourCenturies) {
    for (std::int64_t d = -800; d < 146'097 + 1000; ++d) {
        const auto c = ratelimitd::civil_from_days(d);
        ASSERT_EQ(ratelimitd::days_from_civil(c.year, c.month, c.day), d);
    }
    EXPECT_EQ(ratelimitd::days_from_civil(1970, 1, 1), 0);
    EXPECT_EQ(ratelimitd::days_from_civil(2000, 3, 1), 11'017);
}

TEST(UtcOffset, ParsesFixedOffsetsOnly) {
    EXPECT_EQ(ratelimitd::parse_utc_offset("+02:00"), 120);
    EXPECT_EQ(ratelimitd::parse_utc_offset("-05:30"), -330);
    EXPECT_EQ(ratelimitd::parse_utc_offset("+14:00"), 840);
    EXPECT_EQ(ratelimitd::parse_utc_offset("+00:00"), 0);
    for (const char* bad : {"Europe/Berlin", "+2", "+0200", "+15:00", "+02:60", "02:00", "", "+02:00 "}) {
        EXPECT_FALSE(ratelimitd::parse_utc_offset(bad).has_value()) << bad;
    }
}

TEST(CalendarUnitName, SpellsEveryUnit) {
    for (const char* n : {"1m", "1h", "1d", "1w", "1mo", "1y"}) {
        ASSERT_TRUE(ratelimitd::calendar_unit_named(n).has_value()) << n;
        EXPECT_EQ(ratelimitd::to_string(*ratelimitd::calendar_unit_named(n)), n);
    }
    EXPECT_FALSE(ratelimitd::calendar_unit_named("2m").has_value());
}

}  // namespace
