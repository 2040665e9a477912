// The simulate charts' time labels: round times across the whole span, several of them.
#include "ratelimitd/simulate/time_ticks.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::simulate {
namespace {

constexpr std::int64_t ticks_noon = 1'796'126'400'000;  // 2026-12-01T12:00:00Z
constexpr std::int64_t ticks_minute = 60'000;

std::vector<std::string> labels(const std::vector<TimeTick>& ticks) {
    std::vector<std::string> out;
    for (const auto& t : ticks) out.push_back(t.label);
    return out;
}

TEST(TimeTicks, AShortSpanLabelsEveryMinute) {
    const auto ticks = time_ticks(ticks_noon, ticks_noon + 2 * ticks_minute, 8);
    EXPECT_EQ(labels(ticks), (std::vector<std::string>{"12:00", "12:01", "12:02"}));
    EXPECT_EQ(ticks.back().at_ms, ticks_noon + 2 * ticks_minute);
}

TEST(TimeTicks, AnHourAndAHalfTakesQuarterHoursFromTheFirstRoundOne) {
    // 11:53 to 13:23: 10-ticks_minute steps would make 9 labels; 15-ticks_minute steps make 6.
    const auto ticks = time_ticks(ticks_noon - 7 * ticks_minute, ticks_noon + 83 * ticks_minute, 8);
    EXPECT_EQ(labels(ticks), (std::vector<std::string>{"12:00", "12:15", "12:30", "12:45", "13:00", "13:15"}));
}

TEST(TimeTicks, ASpanAcrossMidnightNamesTheDay) {
    const std::int64_t eleven_pm = ticks_noon + 11 * 60 * ticks_minute;
    const auto ticks = time_ticks(eleven_pm, eleven_pm + 2 * 60 * ticks_minute, 5);
    EXPECT_EQ(labels(ticks), (std::vector<std::string>{"12-01 23:00", "12-01 23:30", "12-02 00:00", "12-02 00:30",
                                                       "12-02 01:00"}));
}

TEST(TimeTicks, ALogWithinOneMinuteHasOneLabel) {
    EXPECT_EQ(labels(time_ticks(ticks_noon + 5'000, ticks_noon + 20'000, 8)), (std::vector<std::string>{"12:00"}));
}

TEST(TimeTicks, DaysLongSpansStepInWholeDays) {
    const auto ticks = time_ticks(ticks_noon, ticks_noon + 10 * 1'440 * ticks_minute, 4);
    ASSERT_EQ(ticks.size(), 4u);
    EXPECT_EQ(ticks[1].at_ms - ticks[0].at_ms, 3 * 1'440 * ticks_minute);  // 1 and 2 days: more than 4
    EXPECT_EQ(ticks[0].label, "12-02 00:00");
}

}  // namespace
}  // namespace ratelimitd::simulate
