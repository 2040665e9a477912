// The conformance suite (store_conformance.hpp): the numbers after a sequence of checks, layered
// limits all or nothing, denied checks changing nothing, Retry-After exact; on every store and
// algorithm (instantiated in store_conformance_test.cpp).
#include "integration/store_conformance.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::test::store_conformance_sequence_test {
namespace {

using namespace conformance;

// ---- the numbers after a sequence of checks --------------------------------------------------

// One check of the sequence and what every store must answer. The reset is an absolute time:
// `reset_in_ms` after the store's "now" of step `anchor` (token bucket and fixed window: the
// first check; sliding log: the check that wrote the entry the reset waits for).
struct Step {
    std::uint32_t cost;
    bool allowed;
    std::int64_t remaining;
    std::int64_t reset_in_ms;
    std::size_t anchor;
};

// Limit 4 per 20 s (token bucket: burst 4, so 1 token = 20000 units, refilled 4 units per ms:
// one token per 5000 ms). Worked out from lua/*.lua; the same costs for every algorithm.
std::vector<Step> expected_sequence(Algorithm a) {
    switch (a) {
        case Algorithm::erl_fixed_window:
            // Not a conformance row (configurable_algorithms): it charges past the limit by
            // design; tests/grpc/grpc_erl_keys_test.cpp holds it on both stores.
            return {};
        case Algorithm::token_bucket:
        case Algorithm::gcra:
            // level 80000 -1-> 60000 -2-> 20000 (1 token) -2 denied- -1-> 0; each reset is
            // when the next (or, denied, the `cost`-th) token is back, counted from the first
            // check because refill since then moves `now` and the missing level alike.
            return {{1, true, 3, 5'000, 0},   {2, true, 1, 5'000, 0},   {2, false, 1, 5'000, 0},
                    {1, true, 0, 5'000, 0},   {1, false, 0, 5'000, 0},  {3, false, 0, 15'000, 0},
                    {4, false, 0, 20'000, 0}};
        case Algorithm::sliding_log:
            // log {t0}, {t0, t1, t1}, denied nth 1 -> t0, {t0, t1, t1, t3}, denied nth 1 -> t0;
            // cost 3 denied: nth = 4 + 3 - 4 = 3 -> the second unit of t1; cost 4: nth 4 -> t3.
            return {{1, true, 3, 20'000, 0},  {2, true, 1, 20'000, 0},  {2, false, 1, 20'000, 0},
                    {1, true, 0, 20'000, 0},  {1, false, 0, 20'000, 0}, {3, false, 0, 20'000, 1},
                    {4, false, 0, 20'000, 3}};
        case Algorithm::fixed_window:
            // one window opened by the first check: reset = its end for every check
            return {{1, true, 3, 20'000, 0},  {2, true, 1, 20'000, 0},  {2, false, 1, 20'000, 0},
                    {1, true, 0, 20'000, 0},  {1, false, 0, 20'000, 0}, {3, false, 0, 20'000, 0},
                    {4, false, 0, 20'000, 0}};
        case Algorithm::sliding_window:
            // One window opened by the first check, nothing before it (p = 0): the counts are
            // the fixed window's. A unit comes back only as the current count c fades through
            // the next window, c * (20000 - e) <= (4 - want) * 20000 at e ms into it:
            // c 1, want 4 -> e 20000; c 3, want 2 -> 6667; c 4, want 1 -> 5000; want 3 ->
            // 15000; want 4 -> 20000 (then nothing of it is left).
            return {{1, true, 3, 40'000, 0},  {2, true, 1, 26'667, 0},  {2, false, 1, 26'667, 0},
                    {1, true, 0, 25'000, 0},  {1, false, 0, 25'000, 0}, {3, false, 0, 35'000, 0},
                    {4, false, 0, 40'000, 0}};
        case Algorithm::concurrency:
            // Leases of 20 s, cost 1 each (a lease is one slot): a slot is free now while one
            // is; once all 4 are held, one comes back when the first lease expires.
            return {{1, true, 3, 0, 0},       {1, true, 2, 0, 1},       {1, true, 1, 0, 2},
                    {1, true, 0, 20'000, 0},  {1, false, 0, 20'000, 0}, {1, false, 0, 20'000, 0}};
    }
    return {};
}

TEST_P(Conformance, NumbersAfterASequenceOfChecks) {
    const Policy p = policy(4, 20s);
    const std::string k = key(p, "sequence");
    const auto steps = expected_sequence(algorithm());
    std::vector<Observed> seen;
    for (const Step& s : steps) seen.push_back(check(p, k, s.cost));
    // The expectations hold while no token refills (5000 ms) and no window ends (20 s).
    ASSERT_LT(seen.back().after_ms - seen.front().before_ms, 4'000) << "the sequence ran too slowly to judge";

    for (std::size_t i = 0; i < steps.size(); ++i) {
        const Step& s = steps[i];
        const Observed& o = seen[i];
        const auto& w = o.window();
        SCOPED_TRACE("step " + std::to_string(i) + " cost " + std::to_string(s.cost) + ": " + describe(o));
        // Exact.
        EXPECT_EQ(o.verdict->allowed, s.allowed);
        EXPECT_EQ(w.allowed, s.allowed);
        EXPECT_EQ(w.policy, p.name);
        EXPECT_EQ(w.limit, 4);
        EXPECT_EQ(w.window_s, 20);
        EXPECT_EQ(w.remaining, s.remaining);
        // The reset in ms lies in the anchor step's bracket plus reset_in_ms. 1 ms of slack
        // below: the fixed-window script reads TIME, then PTTL a few microseconds later, and
        // that can straddle a millisecond (the reset then reads 1 ms early).
        const std::int64_t lo = seen[s.anchor].before_ms + s.reset_in_ms - 1;
        const std::int64_t hi = seen[s.anchor].after_ms + s.reset_in_ms;
        EXPECT_GE(w.reset_epoch_s, ceil_div(lo, 1000));
        EXPECT_LE(w.reset_epoch_s, ceil_div(hi, 1000));
        // reset_after = reset - now, with now inside this step's own bracket.
        EXPECT_GE(w.reset_after_ms, lo - o.after_ms);
        EXPECT_LE(w.reset_after_ms, hi - o.before_ms);
        // A sequence well under a second (and the sliding window's 667 ms past the second
        // more than it lasts): one possible value each.
        EXPECT_EQ(w.reset_after_s, ceil_div(w.reset_after_ms, 1000));
        EXPECT_EQ(w.reset_after_s, ceil_div(s.reset_in_ms, 1000));
        EXPECT_EQ(w.retry_after_s, s.allowed ? 0 : std::max<std::int64_t>(1, w.reset_after_s));
    }
}

// ---- layered limits --------------------------------------------------------------------------

TEST_P(Conformance, LayeredLimitsChargeAllOrNothing) {
    if (algorithm() == Algorithm::concurrency) GTEST_SKIP() << "a lease is one slot: costs above 1 are refused";
    // Two limits of this algorithm decided as one (Redis: lua/multi.lua, whose phase 1 relies
    // on "the peek's remaining >= cost exactly when the real check admits"). The small limit
    // denies the third unit, so the large one must not be charged for it.
    const Policy small = policy(2, 600s);
    Policy large = policy(5, 600s);
    large.name += "-large";
    const std::string ks = key(small, "layered");
    const std::string kl = key(large, "layered");
    const auto both = [&](std::uint32_t cost) {
        std::vector<store::LimitCheck> checks;
        checks.push_back(store::LimitCheck{&small, ks, cost});
        checks.push_back(store::LimitCheck{&large, kl, cost});
        Observed o = lane_->apply_all(std::move(checks));
        if (!o.verdict) throw std::runtime_error(describe(o));
        return o;
    };
    const Observed first = both(2);
    ASSERT_TRUE(first.verdict->allowed) << describe(first);
    ASSERT_EQ(first.verdict->windows.size(), 2u);
    EXPECT_EQ(first.verdict->windows[0].remaining, 0);
    EXPECT_EQ(first.verdict->windows[1].remaining, 3);
    for (int i = 0; i < 3; ++i) {
        const Observed denied = both(1);
        EXPECT_FALSE(denied.verdict->allowed) << describe(denied);
        EXPECT_FALSE(denied.verdict->windows[0].allowed);
        EXPECT_EQ(denied.verdict->windows[1].remaining, 3) << "the large limit was charged";
    }
    // The large limit alone still holds exactly 3.
    EXPECT_TRUE(check(large, kl, 3).verdict->allowed);
    EXPECT_FALSE(check(large, kl, 1).verdict->allowed);
}

// ---- a denied check changes nothing ----------------------------------------------------------

TEST_P(Conformance, DeniedChecksChangeNothing) {
    if (algorithm() == Algorithm::concurrency) GTEST_SKIP() << "a lease is one slot: costs above 1 are refused";
    // Two keys with the same history, except that `a` is denied again and again meanwhile. A
    // denial that charged, extended the window or restarted the token refill would leave `a`
    // behind `b`.
    const Policy p = policy(2, 1'000ms);  // token bucket, GCRA: one unit per 500 ms
    // Each step holds only while its checks reach the store within the margin it relies on: a
    // loaded machine that delayed one past it tries new keys (until_held).
    until_held([&](int n) {
        bool in_time = true;
        [&] {
            const std::string a = key(p, "denied-often-" + std::to_string(n));
            const std::string b = key(p, "never-denied-" + std::to_string(n));
            const Observed a0 = check(p, a, 2);
            const Observed b0 = check(p, b, 2);
            ASSERT_TRUE(a0.verdict->allowed && b0.verdict->allowed);
            const std::int64_t first_window_end = a0.before_ms + 1'000;  // b opened after a
            const auto at = [&](std::int64_t offset_ms) {
                std::this_thread::sleep_until(std::chrono::system_clock::time_point(
                    std::chrono::milliseconds(std::max(a0.after_ms, b0.after_ms) + offset_ms)));
            };
            // The pair's checks; in time when a's answered before `a_by` and b's before `b_by`.
            const auto expect_same = [&](std::uint32_t cost, bool allowed, std::int64_t a_by, std::int64_t b_by) {
                const Observed oa = check(p, a, cost);
                const Observed ob = check(p, b, cost);
                in_time = in_time && oa.after_ms < a_by && ob.after_ms < b_by;
                SCOPED_TRACE("cost " + std::to_string(cost) + ": " + describe(oa) + " vs " + describe(ob));
                EXPECT_EQ(oa.verdict->allowed, allowed);
                EXPECT_EQ(ob.verdict->allowed, allowed);
                EXPECT_EQ(oa.window().remaining, ob.window().remaining);
                EXPECT_EQ(oa.window().reset_after_s, ob.window().reset_after_s);
                EXPECT_EQ(oa.window().retry_after_s, ob.window().retry_after_s);
                return std::pair{oa, ob};
            };
            // Cost 2 stays denied for the whole window (token bucket: 2 tokens need 1000 ms).
            int denials = 0;
            while (wall_ms() < a0.before_ms + 700) {
                const Observed o = check(p, a, 2);
                in_time = in_time && o.after_ms < first_window_end;
                ASSERT_FALSE(o.verdict->allowed) << describe(o);
                ++denials;
                std::this_thread::sleep_for(50ms);  // real time must pass: the stores read a real clock
            }
            ASSERT_GE(denials, 5);
            // Mid-window: 1.5 tokens are back for both (had the denials restarted the refill, `a`
            // would hold a tenth of one); the others are still full for both.
            at(750);
            expect_same(1, bucket_like(algorithm()), first_window_end, first_window_end);
            // Once the state of `b` is gone (token bucket: refilled 750 ms after its last admit;
            // sliding window counter: the next window has passed too; the others: the window
            // has passed; + 1 for the expiry ms), `a` is just as fresh; denied again for 500 ms.
            at(bucket_like(algorithm())                        ? 1'550
               : algorithm() == Algorithm::sliding_window ? 2'050
                                                          : 1'050);
            const auto [a2, b2] = expect_same(2, true, INT64_MAX, INT64_MAX);
            expect_same(1, false, a2.before_ms + 500, b2.before_ms + 500);
        }();
        return in_time;
    });
}

// ---- reset after Retry-After -----------------------------------------------------------------

TEST_P(Conformance, ACheckPassesExactlyRetryAfterSecondsAfterADenial) {
    if (algorithm() == Algorithm::concurrency) GTEST_SKIP() << "a lease is one slot: costs above 1 are refused";
    // 1.5 s, not 2 s: with a whole-second TTL a caller that waits exactly Retry-After can land
    // on a fixed-window key's expiry millisecond, when Redis still holds the full counter
    // (keys expire when now > expire_at). That 1 ms is pinned by memory_store_test.cpp.
    const Policy p = policy(2, 1'500ms);  // token bucket: one token per 750 ms
    // The check shortly before the reset says something only when the store answered it before
    // the reset: a loaded machine that delayed it past the reset tries a new key.
    until_held([&](int n) {
        const std::string k = key(p, "waiter-" + std::to_string(n));
        bool in_time = true;  // an attempt that failed before the early check holds
        [&] {
            ASSERT_TRUE(check(p, k, 2).verdict->allowed);
            const Observed denied = check(p, k, 1);
            ASSERT_FALSE(denied.verdict->allowed) << describe(denied);
            const auto& w = denied.window();
            // token bucket, GCRA: the next unit in 750 ms; sliding window counter: 2 * (1500 - e) <=
            // 1 * 1500 at e = 750 ms into the next window, 2250 ms away; the others: the window's end,
            // 1500 ms away.
            EXPECT_EQ(w.retry_after_s, bucket_like(algorithm())                        ? 1
                                       : algorithm() == Algorithm::sliding_window ? 3
                                                                                  : 2)
                << describe(denied);

            // Shortly before the reset the check is still denied: Retry-After is not a guess.
            std::this_thread::sleep_until(std::chrono::system_clock::time_point(
                std::chrono::milliseconds(denied.before_ms + w.reset_after_ms - 250)));
            const Observed early = check(p, k, 1);
            in_time = early.after_ms < denied.before_ms + w.reset_after_ms;
            EXPECT_FALSE(early.verdict->allowed) << describe(early);

            std::this_thread::sleep_until(std::chrono::system_clock::time_point(
                std::chrono::milliseconds(denied.after_ms + 1'000 * w.retry_after_s)));
            const Observed after = check(p, k, 1);
            EXPECT_TRUE(after.verdict->allowed) << describe(after);
        }();
        return in_time;
    });
}

}  // namespace
}  // namespace ratelimitd::test::store_conformance_sequence_test
