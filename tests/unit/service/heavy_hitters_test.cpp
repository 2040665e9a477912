// Heavy hitters: the Space-Saving sketch, its merge across threads and slices, slice expiry.
#include "ratelimitd/service/space_saving.hpp"
#include "ratelimitd/service/thread_top.hpp"
#include "ratelimitd/service/top_board.hpp"
#include "ratelimitd/service/top_merge.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace ratelimitd::service {
namespace {

using namespace std::chrono_literals;

std::vector<RankedTenant> ranking(const SpaceSaving& s, std::size_t n = 1000) {
    return merge_top(std::span<const SpaceSaving>(&s, 1), n);
}

TEST(SpaceSaving, IsExactWithFewerTenantsThanSlots) {
    SpaceSaving s(4);
    for (int i = 0; i < 7; ++i) s.add("a", 1);
    s.add("b", 5);
    s.add("c", 2);
    s.add("b", 1);
    EXPECT_EQ(s.floor(), 0u);
    EXPECT_EQ(ranking(s), (std::vector<RankedTenant>{{"a", 7, 0}, {"b", 6, 0}, {"c", 2, 0}}));
    EXPECT_EQ(s.total(), 15u);
}

TEST(SpaceSaving, KeepsTheGuaranteedBoundsOnASkewedStream) {
    constexpr std::size_t k = 20;
    SpaceSaving s(k);
    std::map<std::string, std::uint64_t> truth;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> heavy(0, 4);
    std::uniform_int_distribution<int> light(0, 9'999);
    for (int i = 0; i < 100'000; ++i) {
        // A third of the stream from 5 heavy tenants, the rest from 10 000 light ones.
        const std::string t = i % 3 == 0 ? "heavy" + std::to_string(heavy(rng)) : "light" + std::to_string(light(rng));
        const std::uint64_t amount = 1 + static_cast<std::uint64_t>(i % 2);
        s.add(t, amount);
        truth[t] += amount;
    }
    const double bound = static_cast<double>(s.total()) / k;
    for (const auto& e : ranking(s)) {
        ASSERT_TRUE(truth.count(e.tenant)) << e.tenant;
        EXPECT_GE(e.count, truth[e.tenant]) << e.tenant;           // an upper bound
        EXPECT_LE(e.count - e.error, truth[e.tenant]) << e.tenant; // count - error: a lower bound
        EXPECT_LE(static_cast<double>(e.error), bound) << e.tenant;
    }
    // Every tenant above total / K is kept: here the five heavy ones, and they lead.
    const auto top = ranking(s, 5);
    for (const auto& [tenant, sum] : truth) {
        if (static_cast<double>(sum) > bound) {
            EXPECT_TRUE(std::any_of(top.begin(), top.end(), [&](const auto& e) { return e.tenant == tenant; }))
                << tenant;
        }
    }
    EXPECT_EQ(s.entries().size(), k);
}

TEST(SpaceSaving, ClearForgetsEverything) {
    SpaceSaving s(2);
    s.add("a", 3);
    s.add("b", 1);
    s.add("c", 1);
    s.clear();
    EXPECT_TRUE(s.entries().empty());
    EXPECT_EQ(s.total(), 0u);
    s.add("d", 2);
    EXPECT_EQ(ranking(s), (std::vector<RankedTenant>{{"d", 2, 0}}));
}

TEST(TopMerge, SumsThreadsExactlyWhenNoSketchIsFull) {
    SpaceSaving one(3);
    SpaceSaving two(3);
    one.add("x", 4);
    one.add("y", 1);
    two.add("x", 2);
    two.add("z", 3);
    const std::vector<SpaceSaving> all{one, two};
    EXPECT_EQ(merge_top(all, 10), (std::vector<RankedTenant>{{"x", 6, 0}, {"z", 3, 0}, {"y", 1, 0}}));
    EXPECT_EQ(merge_top(all, 1), (std::vector<RankedTenant>{{"x", 6, 0}}));
}

TEST(TopMerge, AddsTheFloorOfAFullSketchThatLacksTheTenant) {
    SpaceSaving full(2);
    full.add("a", 5);
    full.add("b", 3);
    full.add("c", 1);  // replaces b: c = 4, error 3; floor 4 now
    SpaceSaving other(2);
    other.add("b", 2);
    const std::vector<SpaceSaving> all{full, other};
    const auto merged = merge_top(all, 10);
    // b: not kept by `full`, where it may have had up to its floor (4); exact in `other`.
    const auto b = std::find_if(merged.begin(), merged.end(), [](const auto& e) { return e.tenant == "b"; });
    ASSERT_NE(b, merged.end());
    EXPECT_EQ(b->count, 6u);
    EXPECT_EQ(b->error, 4u);
    EXPECT_LE(b->count - b->error, 5u);  // true: 3 + 2
    EXPECT_GE(b->count, 5u);
}

TEST(ThreadTop, SlicesOlderThanTheWindowAreForgotten) {
    TopBoard board({.k = 5, .window = 5s, .slices = 5});
    ThreadTop top({.k = 5, .window = 5s, .slices = 5}, board);
    const auto t0 = ThreadTop::clock::time_point(1000s);
    top.record("login", "ip:192.0.2.7", TopBy::denied, 1, t0);
    top.record("login", "ip:192.0.2.7", TopBy::denied, 1, t0 + 2s);
    top.record("login", "ip:192.0.2.8", TopBy::admitted, 7, t0 + 2s);
    auto now = top.snapshot(std::nullopt, TopBy::denied, t0 + 4s);
    ASSERT_EQ(now.size(), 1u);
    EXPECT_EQ(merge_top(now[0].sketches, 10), (std::vector<RankedTenant>{{"ip:192.0.2.7", 2, 0}}));
    // t0's slice leaves the window at t0 + 5 s; the t0 + 2 s one at t0 + 7 s.
    now = top.snapshot(std::nullopt, TopBy::denied, t0 + 5s);
    EXPECT_EQ(merge_top(now[0].sketches, 10), (std::vector<RankedTenant>{{"ip:192.0.2.7", 1, 0}}));
    EXPECT_TRUE(top.snapshot(std::nullopt, TopBy::denied, t0 + 7s).empty());
    // The ring's slot is reused: a count long after starts from zero.
    top.record("login", "ip:192.0.2.9", TopBy::denied, 1, t0 + 10s);
    now = top.snapshot("login", TopBy::denied, t0 + 10s);
    EXPECT_EQ(merge_top(now[0].sketches, 10), (std::vector<RankedTenant>{{"ip:192.0.2.9", 1, 0}}));
    const auto admitted = top.snapshot("login", TopBy::admitted, t0 + 3s);
    EXPECT_EQ(merge_top(admitted[0].sketches, 10), (std::vector<RankedTenant>{{"ip:192.0.2.8", 7, 0}}));
    EXPECT_TRUE(top.snapshot("other", TopBy::denied, t0 + 3s).empty());
}

}  // namespace
}  // namespace ratelimitd::service
