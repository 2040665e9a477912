// SystemClock::now_ms_at: the system time of a steady instant the caller read, by an offset
// each thread re-reads once a second.
#include "ratelimitd/core/clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

namespace {

using ratelimitd::SystemClock;
using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

TEST(SystemClock, TheTimeOfAnInstantJustReadIsTheSystemTime) {
    const SystemClock clock;
    for (int i = 0; i < 3; ++i) {  // the first call reads the offset, the next ones reuse it
        const std::int64_t before = clock.now_ms();
        const std::int64_t derived = clock.now_ms_at(steady::now());
        const std::int64_t after = clock.now_ms();
        // Within the system clock's own millisecond either side (a slew over at most a second).
        EXPECT_GE(derived, before - 1);
        EXPECT_LE(derived, after + 1);
    }
}

TEST(SystemClock, AnInstantIsPlacedByItsDistanceFromNow) {
    const SystemClock clock;
    const auto now = steady::now();
    const std::int64_t at_now = clock.now_ms_at(now);
    // Earlier and later instants, near (the same offset) and over a second away (read afresh).
    EXPECT_NEAR(static_cast<double>(clock.now_ms_at(now - 300ms)), static_cast<double>(at_now - 300), 2.0);
    EXPECT_NEAR(static_cast<double>(clock.now_ms_at(now + 300ms)), static_cast<double>(at_now + 300), 2.0);
    EXPECT_NEAR(static_cast<double>(clock.now_ms_at(now - 5s)), static_cast<double>(at_now - 5000), 2.0);
    EXPECT_NEAR(static_cast<double>(clock.now_ms_at(now + 5s)), static_cast<double>(at_now + 5000), 2.0);
}

}  // namespace
