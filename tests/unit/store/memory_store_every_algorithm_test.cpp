// MemoryStore: the properties every algorithm of policy::algorithm_table must have (denied checks
// change nothing, keys apart, idle keys dropped, exact admission under concurrency), with a
// manual clock; moved from memory_store_test.cpp, names and assertions as they were.
#include "ratelimitd/store/memory/memory_store.hpp"

#include "support/manual_clock.hpp"

#include "unit/store/memory_policies.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::store::memory::every_algorithm_test {
namespace {

using ratelimitd::test::T0;
using ratelimitd::test::make_policy;

using policy::Algorithm;
using policy::Policy;
using ratelimitd::testing::ManualClock;

// ---- properties shared by every algorithm ----

class EveryAlgorithm : public ::testing::TestWithParam<Algorithm> {
protected:
    Policy policy(std::int64_t limit, std::int64_t window_ms) const {
        return make_policy("p", GetParam(), limit, window_ms);
    }
    // Whether the planner refuses `cost` on `p` (a lease is one slot): no check the store sees.
    static bool refused(const Policy& p, std::int64_t cost) { return cost > p.max_cost(); }
    // How long a key outlives the check that wrote it, in ms of a `window_ms` window, as its
    // script's TTL: a new algorithm must say (-Wswitch fails the build until it does).
    std::int64_t key_life_ms(std::int64_t window_ms) const {
        switch (GetParam()) {
            case Algorithm::fixed_window:
                return window_ms - 1;  // the counter expires 1 ms before its window ends: an exact reset
            case Algorithm::sliding_window:
                return 2 * window_ms;  // the previous window's count weighs through the next
            case Algorithm::token_bucket:
            case Algorithm::sliding_log:
            case Algorithm::gcra:
            case Algorithm::concurrency:
            case Algorithm::erl_fixed_window:
                return window_ms;
        }
        return window_ms;
    }
};

// Everything a sequence of later checks can observe: verdicts and when keys expire.
std::vector<std::int64_t> observe(MemoryStore& store, ManualClock& clock, const Policy& p) {
    std::vector<std::int64_t> seen;
    const std::uint32_t costs[] = {1, 2, 1, 3, 1, 1, 2};
    for (int step = 0; step < 40; ++step) {
        const check::Verdict v = store.decide(p, "k", costs[step % 7]);
        const check::WindowState& w = v.windows.at(0);
        seen.insert(seen.end(), {v.allowed, w.remaining, w.reset_epoch_s, w.retry_after_s,
                                 w.reset_after_s});
        clock.advance(700);
        store.sweep_expired();
        seen.push_back(static_cast<std::int64_t>(store.key_count()));
    }
    return seen;
}

TEST_P(EveryAlgorithm, DeniedCheckChangesNothing) {
    // Two stores with the same history, one of which also sees denied checks: every later
    // answer, and the moment the key expires, must be the same.
    const Policy p = policy(4, 5'000);
    if (refused(p, 4)) GTEST_SKIP() << "costs above " << p.max_cost() << " are refused";
    ManualClock clock_a{T0};
    ManualClock clock_b{T0};
    MemoryStore a{clock_a};
    MemoryStore b{clock_b};
    for (MemoryStore* s : {&a, &b}) {
        ASSERT_TRUE(s->decide(p, "k", 1).allowed);
    }
    clock_a.advance(1'200);
    clock_b.advance(1'200);
    for (MemoryStore* s : {&a, &b}) {
        ASSERT_TRUE(s->decide(p, "k", 3).allowed);
    }
    clock_a.advance(300);
    clock_b.advance(300);
    // Token bucket: 1.2 tokens back by now; the others hold 4 of 4.
    ASSERT_FALSE(a.decide(p, "k", 4).allowed);
    ASSERT_FALSE(a.decide(p, "k", 3).allowed);
    ASSERT_FALSE(a.decide(p, "k", 2).allowed);
    EXPECT_EQ(observe(a, clock_a, p), observe(b, clock_b, p));
}

TEST_P(EveryAlgorithm, KeysAreIsolated) {
    ManualClock clock{T0};
    MemoryStore store{clock};
    const Policy p = policy(2, 60'000);
    if (refused(p, 2)) GTEST_SKIP() << "costs above " << p.max_cost() << " are refused";
    EXPECT_TRUE(store.decide(p, "a", 2).allowed);
    EXPECT_FALSE(store.decide(p, "a", 1).allowed);
    const check::Verdict b = store.decide(p, "b", 1);
    EXPECT_TRUE(b.allowed);
    EXPECT_EQ(b.windows.at(0).remaining, 1);
}

TEST_P(EveryAlgorithm, IdleKeysAreDroppedAndMemoryReturnsToBaseline) {
    ManualClock clock{T0};
    MemoryStore store{clock};
    const Policy p = policy(5, 1'000);  // every algorithm's TTL is at most 1000 ms here
    for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(store.decide(p, "k" + std::to_string(i), 5).allowed);
    EXPECT_EQ(store.key_count(), 10'000u);
    // The expiry millisecond: still there, as in Redis (now > expire_at); a fixed window's
    // counter expires 1 ms before its window ends, so that its reset is exact.
    clock.advance(key_life_ms(1'000));
    EXPECT_EQ(store.sweep_expired(), 0u);
    clock.advance(1);
    EXPECT_EQ(store.sweep_expired(), 10'000u);
    EXPECT_EQ(store.key_count(), 0u);
}

TEST_P(EveryAlgorithm, ChecksLeaveOtherKeysToTheSweeper) {
    // A check spends nothing on other keys (under the cap): the expired ones wait for
    // sweep_expired(), the sweeper's call every 5 s, which drops every one of them.
    ManualClock clock{T0};
    MemoryStore store{clock};
    const Policy short_lived = policy(5, 1'000);
    for (int i = 0; i < 1'000; ++i) store.decide(short_lived, "old" + std::to_string(i), 1);
    clock.advance(key_life_ms(1'000) + 1);  // past the expiry millisecond, when Redis too would have dropped them
    const Policy long_lived = policy(1'000, 3'600'000);
    for (int round = 0; round < 20; ++round) {
        for (int i = 0; i < 640; ++i) store.decide(long_lived, "new" + std::to_string(i), 1);
    }
    EXPECT_EQ(store.key_count(), 1'640u);
    store.sweep_expired();
    EXPECT_EQ(store.key_count(), 640u);
}

TEST_P(EveryAlgorithm, ExactAdmissionUnderConcurrency) {
    // 8 threads x 1000 checks on one key of limit 500, time frozen: exactly 500 admitted,
    // and each admitted check saw a different `remaining` (0..499), as with one Redis script
    // at a time.
    ManualClock clock{T0};
    MemoryStore store{clock};
    const Policy p = policy(500, 60'000);
    std::atomic<int> admitted{0};
    std::vector<std::vector<std::int64_t>> remaining(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 1'000; ++i) {
                const check::Verdict v = store.decide(p, "hot", 1);
                if (v.allowed) {
                    admitted.fetch_add(1);
                    remaining[t].push_back(v.windows.at(0).remaining);
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(admitted.load(), 500);
    std::set<std::int64_t> distinct;
    for (const auto& r : remaining) distinct.insert(r.begin(), r.end());
    EXPECT_EQ(distinct.size(), 500u);
    EXPECT_EQ(*distinct.begin(), 0);
    EXPECT_EQ(*distinct.rbegin(), 499);
}

TEST_P(EveryAlgorithm, ExactAdmissionUnderConcurrencyOnManyKeys) {
    // Threads racing over 100 keys that share shards: each key admits exactly its limit.
    ManualClock clock{T0};
    MemoryStore store{clock};
    const Policy p = policy(10, 60'000);
    std::atomic<int> admitted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 2'000; ++i) {
                if (store.decide(p, "key" + std::to_string((i * 7 + t) % 100), 1).allowed) {
                    admitted.fetch_add(1);
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(admitted.load(), 100 * 10);
}

// Every row of policy::algorithm_table: a new algorithm is covered without a line here.
// (erl_fixed_window, which the Envoy planner alone chooses, charges past the limit by design:
// tests/grpc/grpc_erl_keys_test.cpp holds it, on this store and on Redis.)
std::vector<Algorithm> configurable_algorithms() {
    auto all = policy::all_algorithms();
    std::erase_if(all, [](Algorithm a) { return !policy::traits(a).configurable; });
    return all;
}
INSTANTIATE_TEST_SUITE_P(MemoryStore, EveryAlgorithm, ::testing::ValuesIn(configurable_algorithms()),
                         [](const auto& info) { return std::string(policy::to_string(info.param)); });

}  // namespace
}  // namespace ratelimitd::store::memory::every_algorithm_test
