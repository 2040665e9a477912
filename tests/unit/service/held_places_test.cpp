// DelayMetrics::try_hold with policy bounds (issue 50, max_held): a held answer takes a place
// among the process's and among each bounded policy's that delayed it; a refusal is counted
// under the policy and the bound that refused it; a slot gives every place back.
#include "ratelimitd/service/delay_metrics.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {

using ratelimitd::service::DelayingPolicy;
using ratelimitd::service::DelayMetrics;
using ratelimitd::service::HeldSlot;

std::string rendered(const DelayMetrics& m) {
    std::string out;
    m.render(out);
    return out;
}

bool has_line(const DelayMetrics& m, const std::string& line) {
    return rendered(m).find(line + "\n") != std::string::npos;
}

TEST(HeldPlaces, APolicyBoundRefusesBeyondItsMaxHeldAndASlotGivesEveryPlaceBack) {
    DelayMetrics m;
    const std::vector<DelayingPolicy> capped{{"capped", 2}};
    HeldSlot first = m.try_hold(10, capped);
    HeldSlot second = m.try_hold(10, capped);
    ASSERT_TRUE(first && second);
    EXPECT_FALSE(m.try_hold(10, capped)) << "capped holds its 2";
    EXPECT_EQ(m.held(), 2);
    EXPECT_TRUE(has_line(m, "ratelimitd_held_refused_total{policy=\"capped\",bound=\"policy\"} 1"));
    EXPECT_TRUE(has_line(m, "ratelimitd_held_refused_total{policy=\"capped\",bound=\"process\"} 0"));
    first.reset();  // its process place and its policy place come back together
    EXPECT_EQ(m.held(), 1);
    HeldSlot third = m.try_hold(10, capped);
    EXPECT_TRUE(third);
    // A policy without max_held, and one layered beside capped, meet only the process bound.
    const std::vector<DelayingPolicy> layered{{"open", std::nullopt}, {"capped", 2}};
    EXPECT_FALSE(m.try_hold(10, layered)) << "capped's bound holds in a layered check too";
    EXPECT_EQ(m.held(), 2) << "the refused layered check gave its process place back";
    const std::vector<DelayingPolicy> open{{"open", std::nullopt}};
    std::vector<HeldSlot> opens;
    for (int i = 0; i < 8; ++i) opens.push_back(m.try_hold(10, open));
    for (const auto& s : opens) EXPECT_TRUE(s);
    EXPECT_FALSE(m.try_hold(10, open)) << "the process holds its 10";
    EXPECT_TRUE(has_line(m, "ratelimitd_held_refused_total{policy=\"open\",bound=\"process\"} 1"));
    EXPECT_TRUE(has_line(m, "ratelimitd_held_refused_total{policy=\"capped\",bound=\"policy\"} 2"));
    opens.clear();
    second.reset();
    third.reset();
    EXPECT_EQ(m.held(), 0);
}

// Racing threads never pass a policy's bound: each of 4 threads takes and keeps as many places
// as it gets; together they get exactly max_held.
TEST(HeldPlaces, RacingThreadsTakeExactlyMaxHeldPlaces) {
    DelayMetrics m;
    const std::vector<DelayingPolicy> capped{{"capped", 50}};
    std::vector<std::vector<HeldSlot>> kept(4);
    std::vector<std::thread> threads;
    for (auto& mine : kept) {
        threads.emplace_back([&m, &capped, &mine] {
            for (int i = 0; i < 100; ++i) {
                if (HeldSlot s = m.try_hold(1000, capped)) mine.push_back(std::move(s));
            }
        });
    }
    for (auto& t : threads) t.join();
    std::size_t taken = 0;
    for (const auto& mine : kept) taken += mine.size();
    EXPECT_EQ(taken, 50u);
    EXPECT_EQ(m.held(), 50);
    EXPECT_TRUE(has_line(m, "ratelimitd_held_refused_total{policy=\"capped\",bound=\"policy\"} 350"));
}

}  // namespace
