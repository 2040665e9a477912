// Quota webhooks in the embedded store: each threshold is claimed once per window by the
// check or report that crosses it (lua/notify/crossings.lua in C++), on a manual clock.
#include "ratelimitd/store/memory/memory_store.hpp"

#include "support/manual_clock.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace ratelimitd::store::memory {
namespace {

using ratelimitd::testing::ManualClock;

policy::Policy with_thresholds(policy::Algorithm a, std::int64_t limit, std::vector<double> at) {
    policy::Policy p;
    p.name = "api";
    p.algorithm = a;
    p.limit = limit;
    p.burst = limit;
    p.window = std::chrono::seconds(10);
    auto target = std::make_shared<policy::NotifyTarget>();
    target->name = "ops";
    p.notify = std::make_shared<policy::NotifyRule>(policy::NotifyRule{"api", std::move(at), target});
    return p;
}

TEST(MemoryNotify, AFixedWindowCrossesEachThresholdOnceAndTheFirstDenialOnce) {
    ManualClock clock;
    MemoryStore store(clock);
    const auto p = with_thresholds(policy::Algorithm::fixed_window, 10, {0.8, 1.0});
    std::vector<std::uint8_t> crossed;
    for (int i = 0; i < 15; ++i) crossed.push_back(store.decide(p, "k", 1).windows.front().crossed);
    for (int i = 0; i < 15; ++i) {
        const std::uint8_t expected = i == 7 ? 1 : i == 10 ? 2 : 0;  // the 8th check reaches 8 used; the 11th denies
        EXPECT_EQ(crossed[static_cast<std::size_t>(i)], expected) << "check " << i + 1;
    }
    const auto w = store.decide(p, "k", 1).windows.front();
    EXPECT_EQ(w.crossed, 0);

    clock.advance(10'000);  // the next window claims afresh
    std::uint8_t again = 0;
    std::int64_t window_end = 0;
    for (int i = 0; i < 11; ++i) {
        const auto next = store.decide(p, "k", 1).windows.front();
        again |= next.crossed;
        if (next.crossed != 0) window_end = next.window_end_ms;
    }
    EXPECT_EQ(again, 3);
    EXPECT_EQ(window_end, clock.now_ms() + 10'000) << "the window the first check opened ends then";
}

TEST(MemoryNotify, ACheckJumpingPastSeveralThresholdsCrossesThemAll) {
    ManualClock clock;
    MemoryStore store(clock);
    const auto p = with_thresholds(policy::Algorithm::fixed_window, 10, {0.5, 0.8});
    EXPECT_EQ(store.decide(p, "k", 9).windows.front().crossed, 3);
}

TEST(MemoryNotify, ARefillingBucketDoesNotCrossTwiceInOneWindow) {
    ManualClock clock(1'700'000'000'000);  // a multiple of the 10 s window: it starts here
    MemoryStore store(clock);
    const auto p = with_thresholds(policy::Algorithm::token_bucket, 10, {0.8, 1.0});
    int at_80 = 0;
    int denials = 0;
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 12; ++i) {
            const auto w = store.decide(p, "k", 1).windows.front();
            at_80 += (w.crossed & 1) != 0;
            denials += (w.crossed & 2) != 0;
        }
        clock.advance(3'000);  // refills 3 tokens: the level falls below 80 % and rises past it again
    }
    EXPECT_EQ(at_80, 1);
    EXPECT_EQ(denials, 1);
    clock.set(1'700'000'030'000);  // a later aligned window, the bucket full again
    int later = 0;
    for (int i = 0; i < 12; ++i) later |= store.decide(p, "k", 1).windows.front().crossed;
    EXPECT_EQ(later, 3);
}

TEST(MemoryNotify, ConcurrentChecksClaimEachThresholdExactlyOnce) {
    ManualClock clock;
    MemoryStore store(clock);
    const auto p = with_thresholds(policy::Algorithm::sliding_window, 100, {0.8, 1.0});
    std::atomic<int> at_80{0};
    std::atomic<int> denials{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 50; ++i) {
                const auto w = store.decide(p, "k", 1).windows.front();
                at_80 += (w.crossed & 1) != 0;
                denials += (w.crossed & 2) != 0;
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(at_80.load(), 1);
    EXPECT_EQ(denials.load(), 1);
}

TEST(MemoryNotify, APolicyWithoutThresholdsCrossesNothing) {
    ManualClock clock;
    MemoryStore store(clock);
    auto p = with_thresholds(policy::Algorithm::fixed_window, 2, {0.5});
    p.notify = nullptr;
    for (int i = 0; i < 4; ++i) EXPECT_EQ(store.decide(p, "k", 1).windows.front().crossed, 0);
}

TEST(MemoryNotify, ALayeredCheckClaimsOnlyForTheLimitsItCharged) {
    ManualClock clock;
    MemoryStore store(clock);
    const auto wide = with_thresholds(policy::Algorithm::fixed_window, 10, {0.5, 1.0});
    auto narrow = with_thresholds(policy::Algorithm::fixed_window, 1, {1.0});
    narrow.name = "narrow";
    const auto first = store.decide_all({LimitCheck{&wide, "w", 5}, LimitCheck{&narrow, "n", 1}});
    EXPECT_EQ(first.windows[0].crossed, 1) << "5 of 10 used";
    EXPECT_EQ(first.windows[1].crossed, 0);
    const auto second = store.decide_all({LimitCheck{&wide, "w", 5}, LimitCheck{&narrow, "n", 1}});
    EXPECT_FALSE(second.allowed);
    EXPECT_EQ(second.windows[0].crossed, 0) << "not charged: the other limit denied";
    EXPECT_EQ(second.windows[1].crossed, 1) << "the first denial of the narrow limit (its threshold 0)";
}

// ---- debt bounds (notify.policies.NAME.debt): reports, claimed as lua/notify/crossings.lua's notify_debt

policy::Policy with_debt_bound(policy::Algorithm a, std::int64_t bound) {
    policy::Policy p = with_thresholds(a, 10, {});
    p.max_debt = 100;
    auto rule = std::make_shared<policy::NotifyRule>(*p.notify);
    rule->debt = bound;
    p.notify = rule;
    return p;
}

/// The debt a report of `cost` passed (its crossing of the notify bound), 0 when none.
std::int64_t debt_passed_by_report(MemoryStore& store, const policy::Policy& p, const std::string& key, std::int64_t cost) {
    const auto v = store.decide_all({LimitCheck{&p, key, 1, policy::Mode::report, cost}});
    return v.windows.front().debt_passed;
}

TEST(MemoryNotify, EveryAlgorithmsReportPassingTheDebtBoundClaimsItOnceWithTheDebt) {
    for (const auto a : {policy::Algorithm::fixed_window, policy::Algorithm::token_bucket, policy::Algorithm::gcra,
                         policy::Algorithm::sliding_window, policy::Algorithm::sliding_log,
                         policy::Algorithm::erl_fixed_window}) {
        ManualClock clock(1'700'000'000'000);
        MemoryStore store(clock);
        const auto p = with_debt_bound(a, 20);
        SCOPED_TRACE(policy::to_string(a));
        EXPECT_EQ(debt_passed_by_report(store, p, "k", 10), 0) << "the limit used, no debt";
        EXPECT_EQ(debt_passed_by_report(store, p, "k", 15), 0) << "15 units of debt: below the bound";
        EXPECT_EQ(debt_passed_by_report(store, p, "k", 7), 22) << "22 units of debt: past 20";
        EXPECT_EQ(debt_passed_by_report(store, p, "k", 7), 0) << "past it already";
        EXPECT_EQ(debt_passed_by_report(store, p, "other", 40), 30) << "another key claims its own";
    }
}

TEST(MemoryNotify, ADebtBoundIsClaimedOncePerWindowAndNotByRefundsOrChecks) {
    ManualClock clock(1'700'000'000'000);  // a multiple of the 10 s window
    MemoryStore store(clock);
    const auto p = with_debt_bound(policy::Algorithm::token_bucket, 5);
    EXPECT_EQ(debt_passed_by_report(store, p, "k", 16), 6);
    EXPECT_EQ(debt_passed_by_report(store, p, "k", -10), 0) << "a refund passes no bound";
    EXPECT_EQ(debt_passed_by_report(store, p, "k", 10), 0) << "the same window: claimed already";
    EXPECT_EQ(store.decide(p, "k", 1).windows.front().debt_passed, 0) << "a check is no report";
    clock.advance(10'000);  // refills 10 tokens (6 owed: 4 left); the next window claims afresh
    EXPECT_EQ(debt_passed_by_report(store, p, "k", 3), 0) << "1 token left: no debt";
    EXPECT_EQ(debt_passed_by_report(store, p, "k", 7), 6);
}

TEST(MemoryNotify, ConcurrentReportsClaimTheDebtBoundExactlyOnce) {
    ManualClock clock;
    MemoryStore store(clock);
    const auto p = with_debt_bound(policy::Algorithm::sliding_window, 50);
    std::atomic<int> claims{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 20; ++i) claims += debt_passed_by_report(store, p, "k", 3) > 0;
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(claims.load(), 1);
}

TEST(MemoryNotify, APolicyWithoutADebtBoundClaimsNoDebt) {
    ManualClock clock;
    MemoryStore store(clock);
    auto p = with_debt_bound(policy::Algorithm::fixed_window, 5);
    auto rule = std::make_shared<policy::NotifyRule>(*p.notify);
    rule->debt = 0;
    p.notify = rule;
    EXPECT_EQ(debt_passed_by_report(store, p, "k", 100), 0);
}

// ---- thresholds crossed by reports (notify_report): the units charged, past the limit too

/// The thresholds a report of `cost` crossed (w.crossed).
std::uint8_t crossed_by_report(MemoryStore& store, const policy::Policy& p, const std::string& key, std::int64_t cost) {
    return store.decide_all({LimitCheck{&p, key, 1, policy::Mode::report, cost}}).windows.front().crossed;
}

TEST(MemoryNotify, EveryAlgorithmsReportsCrossTheirThresholdsOnceAndReachingTheLimitIsOneDotZero) {
    for (const auto a : {policy::Algorithm::fixed_window, policy::Algorithm::token_bucket, policy::Algorithm::gcra,
                         policy::Algorithm::sliding_window, policy::Algorithm::sliding_log,
                         policy::Algorithm::erl_fixed_window}) {
        ManualClock clock(1'700'000'000'000);
        MemoryStore store(clock);
        auto p = with_thresholds(a, 10, {0.5, 1.0});
        p.max_debt = 100;
        SCOPED_TRACE(policy::to_string(a));
        EXPECT_EQ(crossed_by_report(store, p, "k", 3), 0) << "3 of 10";
        EXPECT_EQ(crossed_by_report(store, p, "k", 3), 1) << "6 of 10: past 5";
        EXPECT_EQ(crossed_by_report(store, p, "k", 3), 0) << "9 of 10";
        EXPECT_EQ(crossed_by_report(store, p, "k", 3), 2) << "12 of 10: the limit reached";
        EXPECT_EQ(store.decide(p, "k", 1).windows.front().crossed, 0) << "the first denial: 1.0 claimed already";
        EXPECT_EQ(crossed_by_report(store, p, "other", 14), 3) << "one report past both, on another key";
    }
}

TEST(MemoryNotify, AReportOfTheIssueCrossesHalfwayAndARefundReArmsNothingInTheSameWindow) {
    ManualClock clock(1'700'000'000'000);
    MemoryStore store(clock);
    auto p = with_thresholds(policy::Algorithm::fixed_window, 1000, {0.5});
    p.max_debt = 1000;
    EXPECT_EQ(crossed_by_report(store, p, "k", 700), 1) << "0 -> 700 of 1,000 with at: [0.5]";
    EXPECT_EQ(crossed_by_report(store, p, "k", 700), 0) << "700 -> 1,400: crossed already";
    EXPECT_EQ(crossed_by_report(store, p, "k", -1200), 0) << "a refund crosses nothing";
    EXPECT_EQ(crossed_by_report(store, p, "k", 600), 0) << "200 -> 800: the same window, claimed";
    clock.advance(10'000);  // the fixed window's counter has expired: a new window
    EXPECT_EQ(crossed_by_report(store, p, "k", 500), 1) << "a new window claims afresh";
}

TEST(MemoryNotify, AnErlCounterChargedPastItsLimitCrossesTheThresholdsBelowOneDotZero) {
    ManualClock clock(1'700'000'000'000);
    MemoryStore store(clock);
    const auto p = with_thresholds(policy::Algorithm::erl_fixed_window, 10, {0.5, 1.0});
    const auto v = store.decide(p, "k", 15);
    EXPECT_FALSE(v.allowed) << "15 > 10: over the limit, and counted all the same";
    EXPECT_EQ(v.windows.front().crossed, 3) << "0.5 by the units charged, 1.0 by the denial";
}

}  // namespace
}  // namespace ratelimitd::store::memory
