// MemoryStore's calendar-aligned fixed windows (`align: calendar`), on a manual clock set to
// real dates: resets at the boundary, nothing carried over, a key per period.
#include "ratelimitd/store/memory/memory_store.hpp"

#include "support/manual_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace ratelimitd::store::memory {
namespace {

using ratelimitd::testing::ManualClock;

policy::Policy monthly(std::int64_t limit, std::int32_t offset_minutes = 0) {
    policy::Policy p;
    p.name = "monthly";
    p.algorithm = policy::Algorithm::fixed_window;
    p.limit = limit;
    p.window = std::chrono::hours(24 * 30);
    p.burst = limit;
    p.calendar = CalendarUnit::month;
    p.utc_offset_minutes = offset_minutes;
    return p;
}

TEST(MemoryCalendar, AMonthEndsAtItsBoundaryAndTheNextStartsEmpty) {
    ManualClock clock(1835481599000);  // 2028-02-29T23:59:59Z, a leap day
    MemoryStore store(clock);
    const auto p = monthly(3);
    const auto first = store.decide(p, "k@", 3).windows.front();
    EXPECT_EQ(first.remaining, 0);
    EXPECT_EQ(first.reset_epoch_s, 1835481600);  // 2028-03-01T00:00:00Z
    EXPECT_EQ(first.reset_after_ms, 1000);
    const auto denied = store.decide(p, "k@", 1).windows.front();
    EXPECT_FALSE(denied.allowed);
    EXPECT_EQ(denied.retry_after_s, 1);

    clock.set(1835481600000);  // the boundary: March counts afresh
    const auto march = store.decide(p, "k@", 1).windows.front();
    EXPECT_TRUE(march.allowed);
    EXPECT_EQ(march.remaining, 2);
    EXPECT_EQ(march.reset_epoch_s, 1835481600 + 31 * 86'400);
    EXPECT_EQ(store.key_count(), 2u) << "one key per period: k@<February's start>, k@<March's start>";
}

TEST(MemoryCalendar, AnOffsetMovesTheBoundary) {
    ManualClock clock(1796077800000);  // 2026-11-30T22:30Z: December already at +02:00
    MemoryStore store(clock);
    const auto w = store.decide(monthly(5, 120), "k@", 1).windows.front();
    EXPECT_EQ(w.reset_epoch_s, 1798754400);  // 2027-01-01T00:00+02:00
    const auto utc = store.decide(monthly(5), "u@", 1).windows.front();
    EXPECT_EQ(utc.reset_epoch_s, 1796083200);  // 2026-12-01T00:00Z
}

}  // namespace
}  // namespace ratelimitd::store::memory
