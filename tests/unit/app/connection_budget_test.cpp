// share_descriptors: both listeners keep their caps when the open-file limit holds them, and
// neither can take the other's half when it does not (issue 31, Medium 4).
#include "ratelimitd/app/fd_limit.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::app {
namespace {

TEST(ConnectionBudget, BothCapsWhenTheyFit) {
    EXPECT_EQ(share_descriptors(20'000, 10'000, 1'000), (ConnectionBudget{10'000, 1'000}));
    EXPECT_EQ(share_descriptors(11'000, 10'000, 1'000), (ConnectionBudget{10'000, 1'000}));
}

TEST(ConnectionBudget, EachKeepsHalfWhenBothAskForMore) {
    // ulimit -n 300 less the reserve, --max-connections 200, the default gRPC cap.
    EXPECT_EQ(share_descriptors(204, 200, 1'000), (ConnectionBudget{102, 102}));
    EXPECT_EQ(share_descriptors(204, 1'000, 200), (ConnectionBudget{102, 102}));
}

TEST(ConnectionBudget, WhatOneLeavesUnusedGoesToTheOther) {
    EXPECT_EQ(share_descriptors(204, 50, 1'000), (ConnectionBudget{50, 154}));
    EXPECT_EQ(share_descriptors(204, 1'000, 4), (ConnectionBudget{200, 4}));
}

TEST(ConnectionBudget, WithoutGrpcHttpGetsAllThereIs) {
    EXPECT_EQ(share_descriptors(236, 10'000, 0), (ConnectionBudget{236, 0}));
    EXPECT_EQ(share_descriptors(236, 100, 0), (ConnectionBudget{100, 0}));
}

TEST(ConnectionBudget, EveryListenerKeepsAtLeastOne) {
    EXPECT_EQ(share_descriptors(0, 10, 10), (ConnectionBudget{1, 1}));
    EXPECT_EQ(share_descriptors(0, 10, 0), (ConnectionBudget{1, 0}));
}

}  // namespace
}  // namespace ratelimitd::app
