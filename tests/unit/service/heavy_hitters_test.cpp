// Heavy hitters: the Space-Saving sketch, its merge across threads and slices, slice expiry,
// sampling past a rate.
#include "ratelimitd/service/space_saving.hpp"
#include "ratelimitd/service/thread_top.hpp"
#include "ratelimitd/service/top_board.hpp"
#include "ratelimitd/service/top_merge.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

TEST(ThreadTop, CountsEveryCheckOfASliceUpToItsExactShare) {
    // A 1 s slice at 200 checks per second: the first 200 checks of each slice are exact.
    const TopOptions options{.k = 5, .window = 5s, .slices = 5, .exact_per_second = 200, .sample_one_in = 16};
    ASSERT_EQ(options.exact_per_slice(), 200u);
    TopBoard board(options);
    ThreadTop top(options, board);
    const auto t0 = ThreadTop::clock::time_point(1000s);
    for (int i = 0; i < 150; ++i) top.record("login", "a", TopBy::denied, 1, t0);
    for (int i = 0; i < 50; ++i) top.record("other", "b", TopBy::admitted, 3, t0 + 500ms);  // the share is per thread
    auto now = top.snapshot("login", TopBy::denied, t0 + 900ms);
    EXPECT_EQ(merge_top(now[0].sketches, 10), (std::vector<RankedTenant>{{"a", 150, 0}}));
    EXPECT_EQ(merge_top(top.snapshot("other", TopBy::admitted, t0 + 900ms)[0].sketches, 10),
              (std::vector<RankedTenant>{{"b", 150, 0}}));
    // Past the share, a check is counted 16 times or not at all.
    for (int i = 0; i < 100; ++i) top.record("login", "a", TopBy::denied, 1, t0 + 900ms);
    now = top.snapshot("login", TopBy::denied, t0 + 900ms);
    const std::uint64_t past = now[0].sketches[0].entries()[0].count - 150;
    EXPECT_EQ(past % 16, 0u) << past;
    EXPECT_GT(past, 0u);  // about 100 / 16 of them were kept
    // A new slice starts exact again.
    for (int i = 0; i < 200; ++i) top.record("login", "c", TopBy::denied, 1, t0 + 1s);
    now = top.snapshot("login", TopBy::denied, t0 + 1s);
    ASSERT_EQ(now[0].sketches.size(), 2u);
    std::vector<RankedTenant> second;
    for (const auto& s : now[0].sketches) {
        if (s.entries()[0].tenant == "c") second = ranking(s);
    }
    EXPECT_EQ(second, (std::vector<RankedTenant>{{"c", 200, 0}}));
}

TEST(ThreadTop, PastTheExactShareASampleEstimatesEachTenantWithoutBias) {
    // One exact check per slice, then 1 in 16 counted 16 times: the estimate of a tenant with
    // c checks has a standard deviation of sqrt(15 c). A periodic stream must not alias.
    const TopOptions options{.k = 5, .window = 5s, .slices = 5, .exact_per_second = 1, .sample_one_in = 16};
    TopBoard board(options);
    ThreadTop top(options, board);
    const auto t0 = ThreadTop::clock::time_point(1000s);
    std::map<std::string, std::uint64_t> truth;
    for (int i = 0; i < 100'000; ++i) {
        const char* tenant = i % 10 < 6 ? "a" : i % 10 < 9 ? "b" : "c";
        top.record("login", tenant, TopBy::denied, 1, t0);
        ++truth[tenant];
    }
    const auto now = top.snapshot("login", TopBy::denied, t0);
    const auto ranked = merge_top(now[0].sketches, 10);
    ASSERT_EQ(ranked.size(), 3u);
    bool any_inexact = false;
    for (const auto& e : ranked) {
        const auto c = static_cast<double>(truth[e.tenant]);
        EXPECT_LT(std::abs(static_cast<double>(e.count) - c), 5 * std::sqrt(15 * c)) << e.tenant << " " << e.count;
        EXPECT_EQ(e.error, 0u);  // three tenants in five slots: the sketch itself is exact
        any_inexact = any_inexact || e.count != truth[e.tenant];
    }
    EXPECT_TRUE(any_inexact) << "nothing was sampled";
    EXPECT_EQ(ranked[0].tenant, "a");
    EXPECT_EQ(ranked[1].tenant, "b");
    EXPECT_EQ(ranked[2].tenant, "c");
}

TEST(ThreadTop, SampleOneInOneCountsEveryCheck) {
    const TopOptions options{.k = 5, .window = 5s, .slices = 5, .exact_per_second = 1, .sample_one_in = 1};
    TopBoard board(options);
    ThreadTop top(options, board);
    const auto t0 = ThreadTop::clock::time_point(1000s);
    for (int i = 0; i < 10'000; ++i) top.record("login", i % 2 == 0 ? "a" : "b", TopBy::admitted, 2, t0);
    EXPECT_EQ(merge_top(top.snapshot("login", TopBy::admitted, t0)[0].sketches, 10),
              (std::vector<RankedTenant>{{"a", 10'000, 0}, {"b", 10'000, 0}}));
}

TEST(ThreadTop, WithoutATimeTheClockIsReadOnlyForCountedChecks) {
    // Exact while under the share: every check counted at the clock's time.
    const TopOptions exact{.k = 5, .window = 5s, .slices = 5, .exact_per_second = 1'000'000, .sample_one_in = 16};
    TopBoard board(exact);
    ThreadTop top(exact, board);
    for (int i = 0; i < 1000; ++i) top.record("login", i % 4 == 0 ? "b" : "a", TopBy::denied, 1);
    EXPECT_EQ(merge_top(top.snapshot("login", TopBy::denied, ThreadTop::clock::now())[0].sketches, 10),
              (std::vector<RankedTenant>{{"a", 750, 0}, {"b", 250, 0}}));

    // Past it: one in 16 kept, counted 16 times, an estimate within its standard deviation's
    // bounds (a slice that turns meanwhile starts with a kept check of weight 16: no bias).
    const TopOptions sampled{.k = 5, .window = 5s, .slices = 5, .exact_per_second = 1, .sample_one_in = 16};
    ThreadTop busy(sampled, board);
    constexpr int checks = 100'000;
    for (int i = 0; i < checks; ++i) busy.record("login", i % 4 == 0 ? "b" : "a", TopBy::denied, 1);
    const auto ranked = merge_top(busy.snapshot("login", TopBy::denied, ThreadTop::clock::now())[0].sketches, 10);
    ASSERT_EQ(ranked.size(), 2u);
    EXPECT_EQ(ranked[0].tenant, "a");
    const double a = checks * 0.75;
    const double b = checks * 0.25;
    EXPECT_LT(std::abs(static_cast<double>(ranked[0].count) - a), 5 * std::sqrt(15 * a)) << ranked[0].count;
    EXPECT_LT(std::abs(static_cast<double>(ranked[1].count) - b), 5 * std::sqrt(15 * b)) << ranked[1].count;
    EXPECT_NE(ranked[0].count, static_cast<std::uint64_t>(a)) << "nothing was sampled";
}

}  // namespace
}  // namespace ratelimitd::service
