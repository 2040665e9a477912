// MemoryStore's key cap (memory_max_keys) and its parts (an ask that never charges, the
// envoyproxy/ratelimit counter charged past the limit); moved from memory_store_test.cpp,
// names and assertions as they were.
#include "ratelimitd/store/memory/memory_store.hpp"

#include "support/manual_clock.hpp"

#include "unit/store/memory_policies.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ratelimitd::store::memory::cap_test {
namespace {

using ratelimitd::test::T0;
using ratelimitd::test::make_policy;

using policy::Algorithm;
using policy::Policy;
using ratelimitd::testing::ManualClock;

// ---- the key cap (memory_max_keys) ----

TEST(MemoryStoreCap, AFloodOfNewKeysStaysWithinTheCapAndEveryEvictionIsCounted) {
    ManualClock clock{T0};
    MemoryStore store{clock, 640};  // 10 keys per shard
    const Policy p = make_policy("fw", Algorithm::fixed_window, 10, 60'000);
    for (int i = 0; i < 10'000; ++i) {
        ASSERT_TRUE(store.decide(p, "flood:" + std::to_string(i), 1).allowed);
        if (i % 250 == 0) {
            ASSERT_LE(store.key_count(), 640u) << "after " << i + 1 << " keys";
        }
    }
    // 10'000 keys over 64 shards fill every shard: exactly the cap is held, and every key
    // that is not held was evicted (none had expired).
    EXPECT_EQ(store.key_count(), 640u);
    EXPECT_EQ(store.evictions(), 10'000u - 640u);
}

TEST(MemoryStoreCap, WithoutACapNothingIsEvicted) {
    ManualClock clock{T0};
    MemoryStore store{clock};
    const Policy p = make_policy("fw", Algorithm::fixed_window, 10, 60'000);
    for (int i = 0; i < 5'000; ++i) store.decide(p, "k" + std::to_string(i), 1);
    EXPECT_EQ(store.key_count(), 5'000u);
    EXPECT_EQ(store.evictions(), 0u);
}

TEST(MemoryStoreCap, ExpiredKeysMakeRoomBeforeAnyLiveKeyIsEvicted) {
    ManualClock clock{T0};
    MemoryStore store{clock, 640};
    const Policy p = make_policy("fw", Algorithm::fixed_window, 10, 1'000);
    for (int i = 0; i < 2'000; ++i) store.decide(p, "old" + std::to_string(i), 1);
    ASSERT_EQ(store.key_count(), 640u);
    const auto evicted_before = store.evictions();
    clock.advance(1'001);  // every old key has expired
    // Few enough new keys that no shard gets more than its share of them: each takes the
    // place of expired keys, so nothing live is evicted.
    for (int i = 0; i < 160; ++i) {
        ASSERT_TRUE(store.decide(p, "new" + std::to_string(i), 1).allowed);
    }
    EXPECT_EQ(store.evictions(), evicted_before);
    EXPECT_LE(store.key_count(), 640u);
}

TEST(MemoryStoreCap, TheKeyNearestItsExpiryIsEvictedFirst) {
    // 4 keys per shard, so each shard's sample covers it all. Long-lived keys (1 h) share the
    // shards with a flood of short-lived ones (10 s): the flood only evicts itself.
    ManualClock clock{T0};
    MemoryStore store{clock, 256};
    const Policy long_lived = make_policy("long", Algorithm::fixed_window, 5, 3'600'000);
    const Policy short_lived = make_policy("short", Algorithm::fixed_window, 5, 10'000);
    for (int i = 0; i < 16; ++i) store.decide(long_lived, "long" + std::to_string(i), 1);
    clock.advance(1);
    for (int i = 0; i < 2'000; ++i) store.decide(short_lived, "short" + std::to_string(i), 1);
    for (int i = 0; i < 16; ++i) {
        // Still counted: 1 of 5 used.
        EXPECT_EQ(store.inspect(long_lived, "long" + std::to_string(i)).windows.at(0).remaining, 4) << i;
    }
    EXPECT_EQ(store.key_count(), 256u);
    EXPECT_EQ(store.evictions(), 2'016u - 256u);
}

TEST(MemoryStoreCap, AnEvictedKeyStartsAfreshSoEvictionCanOnlyAdmitMore) {
    ManualClock clock{T0};
    MemoryStore store{clock, 64};  // one key per shard
    const Policy p = make_policy("fw", Algorithm::fixed_window, 2, 60'000);
    ASSERT_TRUE(store.decide(p, "victim", 2).allowed);
    ASSERT_FALSE(store.decide(p, "victim", 1).allowed);
    for (int i = 0; i < 1'000; ++i) store.decide(p, "other" + std::to_string(i), 1);
    ASSERT_GT(store.evictions(), 0u);
    // Its shard was refilled many times over: the denied key was forgotten and admits again.
    EXPECT_TRUE(store.decide(p, "victim", 1).allowed);
}

TEST(MemoryStoreCap, LayeredChecksStayWithinTheCapToo) {
    ManualClock clock{T0};
    MemoryStore store{clock, 128};  // 2 keys per shard: room for both keys of one check
    const Policy a = make_policy("a", Algorithm::token_bucket, 10, 60'000);
    const Policy b = make_policy("b", Algorithm::sliding_log, 10, 60'000);
    for (int i = 0; i < 1'000; ++i) {
        const std::string t = std::to_string(i);
        std::vector<LimitCheck> checks;
        checks.push_back(LimitCheck{&a, "a:" + t, 1});
        checks.push_back(LimitCheck{&b, "b:" + t, 1});
        ASSERT_TRUE(store.decide_all(checks).allowed);
        ASSERT_LE(store.key_count(), 128u) << "after check " << i;
    }
    EXPECT_EQ(store.evictions(), 2'000u - store.key_count());
}

// multi.lua's parts, in process: an ask is read, never charged, and denies the call once
// nothing is left; a charge is charged whatever the others answer.
TEST(MemoryStoreParts, AnAskDeniesOnceNothingIsLeftAndIsNeverCharged) {
    ManualClock clock{T0};
    MemoryStore store{clock, 0};
    const Policy p = make_policy("fw", Algorithm::fixed_window, 2, 60'000);
    const Policy wide = make_policy("wide", Algorithm::fixed_window, 10, 60'000);
    const auto ask = [&](const std::string& key) {
        return store.decide_all({LimitCheck{&p, key, 0, policy::Mode::check, 0, policy::Part::ask},
                                 LimitCheck{&wide, "charged:" + key, 1}});
    };
    EXPECT_TRUE(ask("k").allowed);
    EXPECT_EQ(store.decide(p, "k", 1).windows.front().remaining, 1) << "the asks charged nothing";
    EXPECT_TRUE(ask("k").allowed);
    EXPECT_EQ(store.decide(p, "k", 1).windows.front().remaining, 0);
    const auto spent = ask("k");
    EXPECT_FALSE(spent.allowed);
    EXPECT_FALSE(spent.windows[0].allowed);
    EXPECT_GE(spent.windows[0].retry_after_s, 1);
    EXPECT_TRUE(spent.windows[1].allowed) << "would have admitted";
    EXPECT_EQ(store.decide(wide, "charged:k", 1).windows.front().remaining, 7) << "charged twice, not three times";
}

TEST(MemoryStoreParts, EnvoyproxyRatelimitsCounterIsChargedPastTheLimitWhateverTheOthers) {
    ManualClock clock{T0};
    MemoryStore store{clock, 0};
    const Policy small = make_policy("erl", Algorithm::erl_fixed_window, 2, 60'000);
    const Policy big = make_policy("erl-big", Algorithm::erl_fixed_window, 100, 60'000);
    const auto call = [&](policy::Part part) {
        return store.decide_all({LimitCheck{&small, std::string("s:") + (part == policy::Part::charge ? "c" : "d"), 3,
                                            policy::Mode::check, 0, part},
                                 LimitCheck{&big, std::string("b:") + (part == policy::Part::charge ? "c" : "d"), 3,
                                            policy::Mode::check, 0, part}});
    };
    // charge: both charged, the small one over (3 > 2).
    auto v = call(policy::Part::charge);
    EXPECT_FALSE(v.windows[0].allowed);
    EXPECT_TRUE(v.windows[1].allowed);
    EXPECT_EQ(v.windows[1].remaining, 97);
    // decide (envoy_denied_calls: refuse): only the one going past its limit is charged.
    v = call(policy::Part::decide);
    EXPECT_FALSE(v.windows[0].allowed);
    EXPECT_TRUE(v.windows[1].allowed);
    EXPECT_EQ(v.windows[1].remaining, 100) << "not charged";
    // A cost of 0 asks: over only past the limit (the small one is at 3 of 2 now).
    EXPECT_FALSE(store.decide(small, "s:d", 0).allowed);
    EXPECT_TRUE(store.decide(big, "b:d", 0).allowed);
}

}  // namespace
}  // namespace ratelimitd::store::memory::cap_test
