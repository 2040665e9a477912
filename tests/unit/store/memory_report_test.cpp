// MemoryStore's report mode (POST /v1/report): debt, refunds, and exactness under threads,
// with a manual clock, against numbers worked out by hand from lua/*.lua's report mode.
#include "ratelimitd/store/memory/memory_store.hpp"

#include "support/manual_clock.hpp"

#include "unit/store/memory_policies.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <thread>
#include <vector>

namespace ratelimitd::store::memory {
namespace {

using ratelimitd::test::T0;

using policy::Algorithm;
using policy::Policy;
using ratelimitd::testing::ManualClock;


/// A policy named after its algorithm (rep-<algorithm>).
Policy report_policy(Algorithm a, std::int64_t limit, std::int64_t window_ms) {
    Policy p;
    p.name = std::string("rep-") + policy::to_string(a);
    p.algorithm = a;
    p.limit = limit;
    p.window = std::chrono::milliseconds(window_ms);
    p.burst = limit;
    return p;
}

check::WindowState report(MemoryStore& store, const Policy& p, const std::string& key, std::int64_t cost) {
    const auto v = store.decide_all({LimitCheck{&p, key, 1, policy::Mode::report, cost}});
    EXPECT_TRUE(v.allowed) << "a report is always charged";
    return v.windows.front();
}

class ReportDebt : public ::testing::TestWithParam<Algorithm> {};

// 10 units per 10 s (one per second back for the bucket, the window's end for the others): a
// report of 15 leaves a debt of 5, and checks are denied until it is repaid, exactly then.
TEST_P(ReportDebt, IsRepaidExactlyWhenRetryAfterSays) {
    ManualClock clock(T0);
    MemoryStore store(clock);
    const Policy p = report_policy(GetParam(), 10, 10'000);
    const auto after = report(store, p, "k", 15);
    EXPECT_EQ(after.remaining, 0);
    EXPECT_EQ(after.retry_after_s, 0);

    const auto denied = store.decide(p, "k", 1);
    ASSERT_FALSE(denied.allowed);
    const std::int64_t wait_ms = denied.windows.front().reset_after_ms;
    const bool bucket = GetParam() == Algorithm::token_bucket || GetParam() == Algorithm::gcra;
    // Bucket: 5 owed + 1 to spend = 6 tokens at one per second. Windows: the window's end
    // (the sliding window counter: when the 15 of this window weigh 9 or less, 4 s into the next;
    // a fixed window's counter lives through its expiry millisecond, 9999 ms after it opened).
    EXPECT_EQ(wait_ms, bucket ? 6'000 : GetParam() == Algorithm::sliding_window ? 14'000 : 10'000);
    EXPECT_EQ(denied.windows.front().retry_after_s, wait_ms / 1000);

    clock.set(T0 + wait_ms - 1);
    EXPECT_FALSE(store.decide(p, "k", 1).allowed) << "one millisecond early";
    clock.set(T0 + wait_ms);
    EXPECT_TRUE(store.decide(p, "k", 1).allowed) << "repaid";
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ReportDebt,
                         ::testing::Values(Algorithm::token_bucket, Algorithm::gcra, Algorithm::fixed_window,
                                           Algorithm::sliding_window, Algorithm::sliding_log),
                         [](const auto& info) { return std::string(policy::to_string(info.param)); });

class ReportRefund : public ::testing::TestWithParam<Algorithm> {};

TEST_P(ReportRefund, NeverRisesAboveCapacity) {
    ManualClock clock(T0);
    MemoryStore store(clock);
    const Policy p = report_policy(GetParam(), 10, 600'000);
    EXPECT_EQ(report(store, p, "full", -5).remaining, 10) << "a full quota stays full";
    ASSERT_TRUE(store.decide(p, "k", 3).allowed);
    EXPECT_EQ(report(store, p, "k", -5).remaining, 10) << "3 taken, 5 refunded: full, not 12";
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(store.decide(p, "k", 1).allowed) << i;
    EXPECT_FALSE(store.decide(p, "k", 1).allowed);
}

TEST_P(ReportRefund, ReserveThenSettleSpendsTheActualCost) {
    ManualClock clock(T0);
    MemoryStore store(clock);
    const Policy p = report_policy(GetParam(), 100, 600'000);
    ASSERT_TRUE(store.decide(p, "k", 40).allowed);       // reserve 40
    EXPECT_EQ(report(store, p, "k", 25 - 40).remaining, 75);  // 25 used: 15 back
    ASSERT_TRUE(store.decide(p, "k", 40).allowed);       // reserve 40
    EXPECT_EQ(report(store, p, "k", 70 - 40).remaining, 5);   // 70 used: 30 more
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ReportRefund,
                         ::testing::Values(Algorithm::token_bucket, Algorithm::gcra, Algorithm::fixed_window,
                                           Algorithm::sliding_window),
                         [](const auto& info) { return std::string(policy::to_string(info.param)); });

TEST(ReportLayered, ChargesEveryLimitWhateverTheOthersSay) {
    ManualClock clock(T0);
    MemoryStore store(clock);
    const Policy small = report_policy(Algorithm::fixed_window, 2, 60'000);
    const Policy big = report_policy(Algorithm::token_bucket, 100, 60'000);
    const auto v = store.decide_all({LimitCheck{&small, "a", 1, policy::Mode::report, 5},
                                     LimitCheck{&big, "b", 1, policy::Mode::report, 5}});
    ASSERT_TRUE(v.allowed);
    EXPECT_EQ(v.windows[0].remaining, 0);
    EXPECT_EQ(v.windows[1].remaining, 95);
}

// 64 threads: 32 check one unit at a time, 32 reserve one unit and refund it. Admitted
// units never pass limit + refunds, and the count left is exactly admitted - refunded.
// The checkers start once every refunder has made its first attempt: on a busy machine the
// checkers could otherwise spend the whole limit before any refunder ran, and the race with
// refunds the test is about would not happen (a refunder's first attempt is admitted: the
// refunders alone never hold more than 32 units of 200).
TEST(ReportConcurrency, ChecksRacingRefundsNeverAdmitMoreThanLimitPlusRefunds) {
    ManualClock clock(T0);
    MemoryStore store(clock);
    const Policy p = report_policy(Algorithm::fixed_window, 200, 600'000);
    std::atomic<std::int64_t> admitted{0};
    std::atomic<std::int64_t> refunded{0};
    std::latch refunders_started(32);
    std::vector<std::thread> pool;
    for (int t = 0; t < 64; ++t) {
        pool.emplace_back([&, t] {
            const bool refunder = t % 2 == 1;
            if (!refunder) refunders_started.wait();
            for (int i = 0; i < 50; ++i) {
                if (store.decide(p, "hot", 1).allowed) {
                    admitted.fetch_add(1);
                    if (refunder) {
                        report(store, p, "hot", -1);  // never below 0: this thread's own unit is in the count
                        refunded.fetch_add(1);
                    }
                }
                if (refunder && i == 0) refunders_started.count_down();
            }
        });
    }
    for (auto& th : pool) th.join();
    EXPECT_LE(admitted.load(), p.limit + refunded.load());
    const auto left = store.inspect(p, "hot").windows.front().remaining;
    EXPECT_EQ(p.limit - left, admitted.load() - refunded.load());
    EXPECT_GT(refunded.load(), 0);
}

}  // namespace
}  // namespace ratelimitd::store::memory
