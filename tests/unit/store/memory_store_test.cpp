// MemoryStore against numbers worked out by hand from lua/*.lua, with a manual clock.
#include "ratelimitd/store/memory/memory_store.hpp"

#include "support/manual_clock.hpp"
#include "support/run_on_io.hpp"

#include "unit/store/memory_policies.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::store::memory {
namespace {

using ratelimitd::test::T0;
using ratelimitd::test::make_policy;

using policy::Algorithm;
using policy::Policy;
using ratelimitd::testing::ManualClock;

constexpr std::int64_t E = T0 / 1000;

// One expected script reply (limit is always the policy's and is checked too).
struct Want {
    bool allowed;
    std::int64_t remaining;
    std::int64_t reset_epoch_s;
    std::int64_t retry_after_s;
    std::int64_t reset_after_s;
};

::testing::AssertionResult check_is(MemoryStore& store, const Policy& p, const std::string& key,
                                    std::uint32_t cost, const Want& want) {
    const check::Verdict v = store.decide(p, key, cost);
    if (v.windows.size() != 1) return ::testing::AssertionFailure() << "windows: " << v.windows.size();
    const check::WindowState& w = v.windows[0];
    const std::int64_t window_s = std::max<std::int64_t>(1, (p.window.count() + 999) / 1000);
    if (v.allowed == want.allowed && w.allowed == want.allowed && w.policy == p.name &&
        w.limit == p.limit && w.window_s == window_s && w.remaining == want.remaining &&
        w.reset_epoch_s == want.reset_epoch_s && w.retry_after_s == want.retry_after_s &&
        w.reset_after_s == want.reset_after_s) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "got {allowed " << v.allowed << "/" << w.allowed << ", policy " << w.policy << ", limit "
           << w.limit << ", window_s " << w.window_s << ", remaining " << w.remaining << ", reset E+"
           << w.reset_epoch_s - E << ", retry_after " << w.retry_after_s << ", reset_after "
           << w.reset_after_s << "} want {allowed " << want.allowed << ", remaining " << want.remaining
           << ", reset E+" << want.reset_epoch_s - E << ", retry_after " << want.retry_after_s
           << ", reset_after " << want.reset_after_s << "}";
}

class MemoryStoreTest : public ::testing::Test {
protected:
    void at(std::int64_t offset_ms) { clock_.set(T0 + offset_ms); }

    ManualClock clock_{T0};
    MemoryStore store_{clock_};
};

// ---- token bucket: level in units of 1/window_ms token, refilled `limit` units per ms ----

TEST_F(MemoryStoreTest, TokenBucketSequenceAndRefillToTheFraction) {
    // limit 3 per 10 s, burst 3: capacity = 3 * 10000 = 30000, one token = 10000 units,
    // refill 3 units per ms, so a token takes 10000 / 3 = 3333.33 ms.
    const Policy p = make_policy("tb", Algorithm::token_bucket, 3, 10'000);
    at(0);
    // level 30000 -> 20000; tokens 2; reset = ceil((3*10000 - 20000) / 3) = 3334 ms
    // -> epoch ceil((T0 + 3334) / 1000) = E + 4, reset_after ceil(3.334) = 4
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 2, E + 4, 0, 4}));
    // 20000 -> 10000; tokens 1; reset = ceil((2*10000 - 10000) / 3) = 3334
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 1, E + 4, 0, 4}));
    // 10000 -> 0; reset = ceil(10000 / 3) = 3334
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 0, E + 4, 0, 4}));
    // denied: level 0 < need 10000; reset = ceil((10000 - 0) / 3) = 3334; retry = 4
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 4, 4, 4}));

    at(3333);
    // level = 0 + 3333 * 3 = 9999 < 10000: still no whole token.
    // reset = 3333 + ceil(1 / 3) = 3334 -> E + 4; reset_after = ceil(1 / 1000) = 1
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 4, 1, 1}));

    at(3334);
    // level = 3334 * 3 = 10002 >= 10000: admitted, level 2.
    // tokens 0; reset = 3334 + ceil((10000 - 2) / 3) = 3334 + 3333 = 6667 -> E + 7,
    // reset_after = ceil(3333 / 1000) = 4
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 0, E + 7, 0, 4}));

    at(5000);
    // level = 2 + (5000 - 3334) * 3 = 2 + 4998 = 5000 (written at the last admit only, so
    // the denials above did not move t). reset = 5000 + ceil(5000 / 3) = 5000 + 1667 = 6667
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 7, 2, 2}));
}

TEST_F(MemoryStoreTest, TokenBucketCostAboveOne) {
    // limit 10 per 1 s, burst 20: capacity 20000 units, 1000 units per token, 10 units/ms.
    const Policy p = make_policy("tb", Algorithm::token_bucket, 10, 1'000, 20);
    at(0);
    // cost 15: 20000 -> 5000; tokens 5; reset = ceil((6000 - 5000) / 10) = 100 ms -> E + 1
    EXPECT_TRUE(check_is(store_, p, "k", 15, {true, 5, E + 1, 0, 1}));
    // cost 6: need 6000 > 5000, denied; reset = ceil(1000 / 10) = 100; retry max(1, 1) = 1
    EXPECT_TRUE(check_is(store_, p, "k", 6, {false, 5, E + 1, 1, 1}));
    at(50);
    // level 5000 + 50 * 10 = 5500 < 6000; remaining floor(5.5) = 5; reset 50 + 50 = 100
    EXPECT_TRUE(check_is(store_, p, "k", 6, {false, 5, E + 1, 1, 1}));
    at(100);
    // level 5000 + 100 * 10 = 6000: admitted, level 0; reset = 100 + ceil(1000 / 10) = 200
    EXPECT_TRUE(check_is(store_, p, "k", 6, {true, 0, E + 1, 0, 1}));
    at(1050);
    // level 950 * 10 = 9500; cost 20 denied: reset = 1050 + ceil((20000 - 9500) / 10) = 2100
    // -> E + 3, reset_after ceil(1050 / 1000) = 2
    EXPECT_TRUE(check_is(store_, p, "k", 20, {false, 9, E + 3, 2, 2}));
}

TEST_F(MemoryStoreTest, TokenBucketKeyExpiresWhenFull) {
    const Policy p = make_policy("tb", Algorithm::token_bucket, 3, 10'000);
    at(0);
    ASSERT_TRUE(store_.decide(p, "k", 3).allowed);
    // level 0: PEXPIRE ceil((30000 - 0) / 3) = 10000 ms
    at(9'999);
    EXPECT_EQ(store_.sweep_expired(), 0u);
    EXPECT_EQ(store_.key_count(), 1u);
    // Redis expires a key when now > expire_at: during its expiry millisecond it still
    // exists (PTTL 0). Here that is invisible in the answer: the bucket has refilled to full.
    at(10'000);
    EXPECT_EQ(store_.sweep_expired(), 0u);
    EXPECT_EQ(store_.key_count(), 1u);
    at(10'001);
    EXPECT_EQ(store_.sweep_expired(), 1u);
    EXPECT_EQ(store_.key_count(), 0u);
    // The missing key is a full bucket, as in Redis: reset 10001 + 3334 = 13335 -> E + 14.
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 2, E + 14, 0, 4}));
}

TEST_F(MemoryStoreTest, TokenBucketClockSteppingBackRefillsNothing) {
    const Policy p = make_policy("tb", Algorithm::token_bucket, 3, 10'000);
    at(5'000);
    ASSERT_TRUE(store_.decide(p, "k", 3).allowed);
    at(4'000);
    // The decision is dated at the bucket's own last update (5000), not before it: level 0,
    // reset = 5000 + ceil(10000 / 3) = 8334 -> E + 9, 4.334 s after the clock's 4000 -> 5.
    // (lua/token_bucket.lua dates it at Redis's TIME and answers 7334, a token not back by
    // then; there one script runs at a time on one clock. Here two threads read the clock
    // before they take the key in turn, so an earlier reading after a later update is common.)
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 9, 5, 5}));
}

// Two threads read the clock, then decide in turn: the later decision with the earlier reading
// neither refills the milliseconds the first one counted twice nor dates its reservation
// before it. At 10/s, reservations stay 100 ms apart.
TEST_F(MemoryStoreTest, TokenBucketReservationsStayATokenApartWhenAnEarlierReadingDecidesLater) {
    Policy p = make_policy("tb", Algorithm::token_bucket, 10, 1'000);
    p.burst = 1;
    p.max_delay = std::chrono::milliseconds(10'000);
    p.queue_units = 10'000 * 10;  // as the loader sets it: max_delay ms of refill at `limit` units per ms
    at(1'000);
    ASSERT_TRUE(store_.decide(p, "k", 1).allowed);  // the burst: level 0 at 1000
    at(1'050);
    const check::Verdict later = store_.decide(p, "k", 1);  // due 1100
    at(1'040);                                              // an earlier reading, decided after
    const check::Verdict earlier_reading = store_.decide(p, "k", 1);
    ASSERT_TRUE(later.allowed);
    ASSERT_TRUE(earlier_reading.allowed);
    EXPECT_EQ(1'050 + later.windows[0].delay_ms, 1'100);
    // Read at 1040, decided after the decision at 1050: its hold starts no sooner than 1050.
    EXPECT_EQ(1'050 + earlier_reading.windows[0].delay_ms, 1'200) << "due a token after the one before";
    at(1'060);
    const check::Verdict next = store_.decide(p, "k", 1);
    ASSERT_TRUE(next.allowed);
    EXPECT_EQ(1'060 + next.windows[0].delay_ms, 1'300) << "no millisecond refilled twice";
}

// ---- sliding log: an entry scored s counts while s > now - window ----

TEST_F(MemoryStoreTest, SlidingLogSequenceAndExactBoundary) {
    const Policy p = make_policy("sl", Algorithm::sliding_log, 3, 10'000);
    at(0);
    // log {0}; reset = oldest 0 + 10000 -> E + 10, reset_after 10
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 2, E + 10, 0, 10}));
    at(1'000);
    // log {0, 1000}; reset 10000; reset_after ceil(9000 / 1000) = 9
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 1, E + 10, 0, 9}));
    at(2'500);
    // log {0, 1000, 2500}; reset_after ceil(7500 / 1000) = 8
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 0, E + 10, 0, 8}));
    at(5'000);
    // denied cost 1: nth = 3 + 1 - 3 = 1 -> entry 0 -> reset 10000, reset_after 5
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 10, 5, 5}));
    // denied cost 2: nth = 3 + 2 - 3 = 2 -> entry 1000 -> reset 11000 -> E + 11, after 6
    EXPECT_TRUE(check_is(store_, p, "k", 2, {false, 0, E + 11, 6, 6}));
    at(9'999);
    // 0 > 9999 - 10000 = -1: entry 0 still in the window; reset 10000, after ceil(1 / 1000) = 1
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 10, 1, 1}));
    at(10'000);
    // 0 > 10000 - 10000 is false: entry 0 has left exactly now. count 2 -> admitted,
    // log {1000, 2500, 10000}; reset = 1000 + 10000 = 11000 -> E + 11, after 1
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 0, E + 11, 0, 1}));
    at(10'999);
    // 1000 > 999: still in; denied, nth 1 -> 11000; after ceil(1 / 1000) = 1
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 11, 1, 1}));
    at(11'000);
    // 1000 left; log {2500, 10000, 11000}; reset 12500 -> E + 13, after ceil(1500 / 1000) = 2
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 0, E + 13, 0, 2}));
}

TEST_F(MemoryStoreTest, SlidingLogCostAboveOne) {
    // limit 5 per 2 s
    const Policy p = make_policy("sl", Algorithm::sliding_log, 5, 2'000);
    at(0);
    // 3 units at 0; reset 2000 -> E + 2
    EXPECT_TRUE(check_is(store_, p, "k", 3, {true, 2, E + 2, 0, 2}));
    at(500);
    // 3 + 3 > 5 denied: nth = 3 + 3 - 5 = 1 -> unit at 0 -> 2000; after ceil(1500/1000) = 2
    EXPECT_TRUE(check_is(store_, p, "k", 3, {false, 2, E + 2, 2, 2}));
    // cost 2 fits: units {0,0,0,500,500}; reset = oldest 0 + 2000
    EXPECT_TRUE(check_is(store_, p, "k", 2, {true, 0, E + 2, 0, 2}));
    at(1'000);
    // cost 4 denied: nth = 5 + 4 - 5 = 4 -> the 4th oldest unit is at 500 -> 2500 -> E + 3,
    // after ceil(1500 / 1000) = 2
    EXPECT_TRUE(check_is(store_, p, "k", 4, {false, 0, E + 3, 2, 2}));
    // cost 1 denied: nth = 1 -> unit at 0 -> 2000 -> E + 2, after 1
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 2, 1, 1}));
    at(2'000);
    // the three units at 0 left; count 2, cost 3 fits: {500,500,2000,2000,2000};
    // reset 500 + 2000 = 2500 -> E + 3, after ceil(500 / 1000) = 1
    EXPECT_TRUE(check_is(store_, p, "k", 3, {true, 0, E + 3, 0, 1}));
    at(2'499);
    // cost 3 denied: nth = 5 + 3 - 5 = 3 -> the 3rd unit is the first at 2000 -> 4000 -> E + 4
    // after ceil(1501 / 1000) = 2
    EXPECT_TRUE(check_is(store_, p, "k", 3, {false, 0, E + 4, 2, 2}));
}

TEST_F(MemoryStoreTest, SlidingLogKeyExpiresAWindowAfterTheLastAdmit) {
    const Policy p = make_policy("sl", Algorithm::sliding_log, 2, 10'000);
    at(0);
    ASSERT_TRUE(store_.decide(p, "k", 1).allowed);
    at(4'000);
    ASSERT_TRUE(store_.decide(p, "k", 1).allowed);
    ASSERT_FALSE(store_.decide(p, "k", 1).allowed);  // denied: does not extend the TTL
    at(14'000);  // the expiry millisecond: the key still exists, as in Redis (now > expire_at)
    EXPECT_EQ(store_.sweep_expired(), 0u);
    at(14'001);
    EXPECT_EQ(store_.sweep_expired(), 1u);
    EXPECT_EQ(store_.key_count(), 0u);
}

TEST_F(MemoryStoreTest, SlidingLogClockSteppingBackLogsAtTheNewestScore) {
    // A write with a time below the newest entry's is logged at the newest score, as the script
    // does: its entries' running totals follow score order (never earlier: units leave no sooner).
    const Policy p = make_policy("sl", Algorithm::sliding_log, 3, 10'000);
    at(5'000);
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 2, E + 15, 0, 10}));
    at(1'000);
    // log {5000, 5000}; oldest 5000 -> reset 15000 -> E + 15, 14 s from now
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 1, E + 15, 0, 14}));
    // denied cost 2: nth = 2 + 2 - 3 = 1 -> 5000 -> 15000
    EXPECT_TRUE(check_is(store_, p, "k", 2, {false, 1, E + 15, 14, 14}));
    at(3'000);
    // log {5000 x 3}
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 0, E + 15, 0, 12}));
    // denied cost 2: nth = 3 + 2 - 3 = 2 -> 5000 -> 15000
    EXPECT_TRUE(check_is(store_, p, "k", 2, {false, 0, E + 15, 12, 12}));
}

// ---- fixed window: counter whose TTL is the end of the window opened by its first admit ----

TEST_F(MemoryStoreTest, FixedWindowSequenceAndRollover) {
    const Policy p = make_policy("fw", Algorithm::fixed_window, 3, 10'000);
    at(0);
    // new counter 1, PEXPIRE 9999: it lives through ms 9999, so the reset is 10000 -> E + 10
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 2, E + 10, 0, 10}));
    at(4'000);
    // count 2, ttl 5999: reset 6000 ms away
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 1, E + 10, 0, 6}));
    // cost 2 denied: 2 + 2 > 3; retry = ceil(6000 / 1000) = 6
    EXPECT_TRUE(check_is(store_, p, "k", 2, {false, 1, E + 10, 6, 6}));
    at(4'500);
    // count 3, reset 5500 ms away -> 6
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 0, E + 10, 0, 6}));
    at(9'999);
    // The counter's expiry millisecond: Redis still has it (expired only when now > expire_at)
    // with PTTL 0, so the script denies; the reset is the next millisecond -> 1, retry 1.
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 10, 1, 1}));
    at(10'000);
    // gone, exactly at the reset: a new window 10000..20000 -> E + 20
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 2, E + 20, 0, 10}));
    at(19'000);
    // reset 1000 ms away
    EXPECT_TRUE(check_is(store_, p, "k", 2, {true, 0, E + 20, 0, 1}));
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 20, 1, 1}));
}

TEST_F(MemoryStoreTest, FixedWindowCostAboveOne) {
    // limit 10 per 1.5 s: window_s = ceil(1.5) = 2
    const Policy p = make_policy("fw", Algorithm::fixed_window, 10, 1'500);
    at(250);
    // window 250..1750: reset ceil((T0 + 1750) / 1000) = E + 2, reset_after ceil(1.5) = 2
    EXPECT_TRUE(check_is(store_, p, "k", 7, {true, 3, E + 2, 0, 2}));
    at(1'000);
    // 7 + 4 > 10 denied; ttl 750 -> after 1, retry 1
    EXPECT_TRUE(check_is(store_, p, "k", 4, {false, 3, E + 2, 1, 1}));
    EXPECT_TRUE(check_is(store_, p, "k", 3, {true, 0, E + 2, 0, 1}));
    at(1'749);
    // the expiry millisecond: the full counter still exists (PTTL 0), as in Redis; the reset
    // is the next millisecond
    EXPECT_TRUE(check_is(store_, p, "k", 10, {false, 0, E + 2, 1, 1}));
    at(1'750);
    // new window 1750..3250: E + ceil(3.25) = E + 4, reset_after ceil(1.5) = 2
    EXPECT_TRUE(check_is(store_, p, "k", 10, {true, 0, E + 4, 0, 2}));
}

TEST_F(MemoryStoreTest, FixedWindowCostAboveLimitOnAbsentKeyWritesNothing) {
    // Outside apply()'s precondition, but the script's answer is defined: count 0, no TTL.
    const Policy p = make_policy("fw", Algorithm::fixed_window, 3, 10'000);
    at(0);
    EXPECT_TRUE(check_is(store_, p, "k", 4, {false, 3, E, 1, 0}));
    EXPECT_EQ(store_.key_count(), 0u);
}

// ---- the rest of the Store interface ----

// ---- GCRA: the TAT in units of 1/limit ms --------------------------------------------------

TEST_F(MemoryStoreTest, GcraSequenceWithAFractionalEmissionInterval) {
    // limit 3 per 10 s, burst 3: T = 3333.33 ms, tracked exactly as 10000 units of 1/3 ms.
    const Policy p = make_policy("gc", Algorithm::gcra, 3, 10'000);
    // TAT = T0 + T; reset: the next whole unit back at ceil(3333.33) ms.
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 2, E + 4, 0, 4}));
    EXPECT_TRUE(check_is(store_, p, "k", 2, {true, 0, E + 4, 0, 4}));  // TAT = T0 + 10000
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 4, 4, 4}));  // 3334 ms to the next unit
    at(3'333);  // TAT - now = 6666.67 ms: 0.9999 of a unit, not yet
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 4, 1, 1}));
    at(3'334);  // 6666 ms: one whole unit back
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 0, E + 7, 0, 4}));  // next at 3334 + 3334 = 6668
    // The key lives until the TAT is past (T0 + 13333.33): then it means "full".
    at(13'334);
    EXPECT_EQ(store_.key_count(), 1u);
    EXPECT_TRUE(check_is(store_, p, "k", 3, {true, 0, E + 17, 0, 4}));  // full again: all 3; next at +3334
}

TEST_F(MemoryStoreTest, GcraAnswersExactlyAsTheTokenBucket) {
    // GCRA is the token bucket seen from the other end (debt = capacity - level): over a
    // pseudo-random walk of costs and pauses, every number of every answer is the same.
    const Policy tb = make_policy("tb", Algorithm::token_bucket, 7, 3'000, 5);
    const Policy gc = make_policy("gc", Algorithm::gcra, 7, 3'000, 5);
    std::uint64_t x = 88172645463325252ull;
    const auto next = [&x] {  // xorshift64
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    std::int64_t offset = 0;
    for (int i = 0; i < 2'000; ++i) {
        offset += static_cast<std::int64_t>(next() % 900);
        at(offset);
        const auto cost = static_cast<std::uint32_t>(1 + next() % 5);
        const check::Verdict a = store_.decide(tb, "tb", cost);
        const check::Verdict b = store_.decide(gc, "gc", cost);
        const auto& wa = a.windows.at(0);
        const auto& wb = b.windows.at(0);
        ASSERT_EQ(wa.allowed, wb.allowed) << "step " << i;
        ASSERT_EQ(wa.remaining, wb.remaining) << "step " << i;
        ASSERT_EQ(wa.reset_after_ms, wb.reset_after_ms) << "step " << i;
        ASSERT_EQ(wa.retry_after_s, wb.retry_after_s) << "step " << i;
    }
}

// ---- sliding window counter: the previous window weighted by its part still inside ----------

TEST_F(MemoryStoreTest, SlidingWindowWeightsThePreviousWindow) {
    // limit 10 per 1000 ms; the first check opens the window at T0.
    const Policy p = make_policy("sw", Algorithm::sliding_window, 10, 1'000);
    // c 8: the unit after the remaining 2 is back when 8 * (1000 - e) <= 7 * 1000 in the
    // next window, e = 125: T0 + 1125.
    EXPECT_TRUE(check_is(store_, p, "k", 8, {true, 2, E + 2, 0, 2}));
    // Next window at e = 250: 8 * 750 / 1000 = 6 weigh, 4 fit.
    at(1'250);
    EXPECT_TRUE(check_is(store_, p, "k", 5, {false, 4, E + 2, 1, 1}));  // 5 fit once 8*(1000-e) <= 5000: e 375
    EXPECT_TRUE(check_is(store_, p, "k", 4, {true, 0, E + 2, 0, 1}));   // c 4: 8*(1000-e) <= 5000 at e 375
    at(1'374);
    EXPECT_TRUE(check_is(store_, p, "k", 1, {false, 0, E + 2, 1, 1}));  // 8 * 626 = 5008 > 5000
    at(1'375);
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 0, E + 2, 0, 1}));   // 8 * 625 = 5000: fits
    // The state is needed until the end of the window after the current one: T0 + 3000.
    at(3'000);
    EXPECT_EQ(store_.key_count(), 1u);
    EXPECT_TRUE(check_is(store_, p, "k", 10, {true, 0, E + 5, 0, 2}));  // nothing weighs any more
    at(5'001);
    EXPECT_EQ(store_.sweep_expired(), 1u);
}

TEST_F(MemoryStoreTest, SlidingWindowResetIsTheFirstMillisecondACheckFits) {
    // Over a pseudo-random walk: every denial's reset is exact, denied one millisecond before
    // it and admitted at it (a denied check writes nothing, so probing changes nothing);
    // remaining is exactly the largest cost admitted now.
    const Policy p = make_policy("sw", Algorithm::sliding_window, 9, 700);
    std::uint64_t x = 2463534242ull;
    const auto next = [&x] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    std::vector<std::pair<std::int64_t, std::uint32_t>> history;  // admitted (offset, cost)
    std::int64_t offset = 0;
    int denials = 0;
    for (int i = 0; i < 300; ++i) {
        offset += static_cast<std::int64_t>(next() % 200);
        const auto cost = static_cast<std::uint32_t>(1 + next() % 9);
        at(offset);
        const check::Verdict v = store_.decide(p, "k", cost);
        const auto& w = v.windows.at(0);
        if (v.allowed) {
            history.emplace_back(offset, cost);
            continue;
        }
        ++denials;
        ASSERT_LT(w.remaining, static_cast<std::int64_t>(cost)) << "step " << i;
        // Replay the admitted history on a fresh store, then probe the reset's edges.
        ManualClock clock{T0};
        MemoryStore replay{clock};
        for (const auto& [t, c] : history) {
            clock.set(T0 + t);
            ASSERT_TRUE(replay.decide(p, "k", c).allowed);
        }
        const std::int64_t reset = offset + w.reset_after_ms;
        clock.set(T0 + offset);
        ASSERT_EQ(replay.decide(p, "k", static_cast<std::uint32_t>(w.remaining + 1)).allowed, false) << "step " << i;
        if (w.remaining > 0) {
            ASSERT_TRUE(replay.decide(p, "k", static_cast<std::uint32_t>(w.remaining)).allowed) << "step " << i;
            continue;  // that charged the replay: the reset probe below would not hold
        }
        clock.set(T0 + reset - 1);
        ASSERT_FALSE(replay.decide(p, "k", cost).allowed) << "step " << i << " reset " << reset;
        clock.set(T0 + reset);
        ASSERT_TRUE(replay.decide(p, "k", cost).allowed) << "step " << i << " reset " << reset;
    }
    EXPECT_GT(denials, 20);
}

TEST_F(MemoryStoreTest, ApplyMatchesDecideAndTheStoreIsReady) {
    const Policy p = make_policy("fw", Algorithm::fixed_window, 3, 10'000);
    const bool ready = test::run_on_io(store_.ready());
    const std::optional<result<check::Verdict>> got = test::run_on_io(store_.apply(p, "k", 2));
    EXPECT_TRUE(ready);
    ASSERT_TRUE(got.has_value());
    ASSERT_TRUE(got->has_value());
    EXPECT_TRUE((*got)->allowed);
    EXPECT_EQ((*got)->windows.at(0).remaining, 1);
    EXPECT_TRUE(check_is(store_, p, "k", 1, {true, 0, E + 10, 0, 10}));
    EXPECT_EQ(store_.describe(), "embedded (per-instance limits)");
}

TEST_F(MemoryStoreTest, AKeyReusedByAnotherAlgorithmStartsFresh) {
    // A reload may change a policy's algorithm under the same name (so the same keys).
    const Policy fw = make_policy("p", Algorithm::fixed_window, 3, 10'000);
    const Policy tb = make_policy("p", Algorithm::token_bucket, 3, 10'000);
    at(0);
    ASSERT_TRUE(store_.decide(fw, "k", 3).allowed);
    EXPECT_TRUE(check_is(store_, tb, "k", 1, {true, 2, E + 4, 0, 4}));
    EXPECT_EQ(store_.key_count(), 1u);
}

}  // namespace
}  // namespace ratelimitd::store::memory
