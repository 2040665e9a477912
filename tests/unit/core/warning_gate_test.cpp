// WarningGate: the first failure of a run is logged, the rest within the interval are counted,
// a success ends the run. An interval of an hour (or none) keeps the test free of timing.
#include "ratelimitd/core/warning_gate.hpp"

#include <gtest/gtest.h>

namespace {

using ratelimitd::WarningGate;

TEST(WarningGate, LogsTheFirstFailureOfARunAndCountsTheRest) {
    WarningGate gate(std::chrono::hours(1));
    std::uint64_t unlogged = 99;
    EXPECT_TRUE(gate.failed(unlogged));
    EXPECT_EQ(unlogged, 0U);
    int logged = 0;
    for (int i = 0; i < 49; ++i) logged += gate.failed(unlogged) ? 1 : 0;
    EXPECT_EQ(logged, 0);
}

TEST(WarningGate, ASuccessEndsTheRunOnce) {
    WarningGate gate(std::chrono::hours(1));
    EXPECT_FALSE(gate.recovered());  // nothing had failed
    std::uint64_t unlogged = 0;
    EXPECT_TRUE(gate.failed(unlogged));
    EXPECT_TRUE(gate.recovered());
    EXPECT_FALSE(gate.recovered());
    EXPECT_TRUE(gate.failed(unlogged));  // a new run is logged at once
    EXPECT_EQ(unlogged, 0U);
}

TEST(WarningGate, PastTheIntervalLogsAgainWithTheCountNotLogged) {
    WarningGate gate(std::chrono::nanoseconds(0));  // every failure is past the interval
    std::uint64_t unlogged = 0;
    EXPECT_TRUE(gate.failed(unlogged));
    EXPECT_TRUE(gate.failed(unlogged));
    EXPECT_EQ(unlogged, 0U);
}

TEST(WarningGate, TheCountCarriesTheFailuresHeldBack) {
    WarningGate hourly(std::chrono::hours(1));
    std::uint64_t unlogged = 0;
    hourly.failed(unlogged);
    for (int i = 0; i < 7; ++i) hourly.failed(unlogged);
    // A success then a failure: the new run starts its count afresh.
    hourly.recovered();
    EXPECT_TRUE(hourly.failed(unlogged));
    EXPECT_EQ(unlogged, 0U);
}

}  // namespace
