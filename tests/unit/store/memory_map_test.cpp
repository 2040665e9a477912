// The embedded store's map: keys held inline or on the heap (StoredKey), an expired entry reset
// in place by the next admit (and left to the sweep when nothing admits), keys of every length.
#include "ratelimitd/store/memory/memory_store.hpp"
#include "ratelimitd/store/memory/step.hpp"

#include "support/manual_clock.hpp"

#include "unit/store/memory_policies.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace ratelimitd::store::memory {
namespace {

using ratelimitd::test::T0;
using ratelimitd::test::make_policy;

using policy::Algorithm;
using policy::Policy;
using ratelimitd::testing::ManualClock;


TEST(StoredKey, HoldsEveryLengthThroughCopiesAndMoves) {
    for (const std::size_t n : {0, 1, 47, 48, 49, 300}) {
        std::string text(n, 'k');
        if (n > 0) text.back() = 'z';
        const detail::StoredKey key(text);
        EXPECT_EQ(key.view(), text) << n;
        detail::StoredKey copy(key);
        EXPECT_EQ(copy.view(), text) << n;
        detail::StoredKey moved(std::move(copy));
        EXPECT_EQ(moved.view(), text) << n;
        detail::StoredKey assigned("other");
        assigned = key;
        EXPECT_EQ(assigned.view(), text) << n;
        detail::StoredKey move_assigned("other");
        move_assigned = std::move(assigned);
        EXPECT_EQ(move_assigned.view(), text) << n;
        EXPECT_EQ(detail::KeyHash{}(key), detail::KeyHash{}(detail::Key(text))) << "one hash, stored or looked up";
    }
}

TEST(MemoryMap, KeysOfEveryLengthAreDistinctThroughGrowth) {
    // Keys that differ only in their last byte, short (inline) and long (on the heap), enough
    // of them that every shard's map grows several times (its entries move each time).
    ManualClock clock{T0};
    MemoryStore store{clock};
    const Policy p = make_policy(Algorithm::fixed_window, 2, 60'000);
    std::vector<std::string> keys;
    for (const std::size_t len : {8, 48, 49, 120}) {
        for (int i = 0; i < 2'000; ++i) {
            std::string k = std::to_string(i);
            keys.push_back(std::string(len > k.size() ? len - k.size() : 0, 'x') + k);
        }
    }
    for (const auto& k : keys) ASSERT_TRUE(store.decide(p, k, 2).allowed) << k;
    EXPECT_EQ(store.key_count(), keys.size());
    for (const auto& k : keys) ASSERT_FALSE(store.decide(p, k, 1).allowed) << k;
    EXPECT_TRUE(store.forget(keys.front()));
    EXPECT_TRUE(store.decide(p, keys.front(), 1).allowed);
}

TEST(MemoryMap, AnExpiredEntryIsResetInPlaceByTheNextAdmit) {
    ManualClock clock{T0};
    MemoryStore store{clock};
    const Policy p = make_policy(Algorithm::fixed_window, 3, 10'000);
    ASSERT_TRUE(store.decide(p, "k", 3).allowed);
    ASSERT_FALSE(store.decide(p, "k", 1).allowed);
    clock.advance(10'000);  // the counter expired (it lives window - 1 ms)
    // A new window: the old count is gone, and the entry was reused, not added beside.
    const auto v = store.decide(p, "k", 1);
    EXPECT_TRUE(v.allowed);
    EXPECT_EQ(v.windows.at(0).remaining, 2);
    EXPECT_EQ(store.key_count(), 1u);
    EXPECT_EQ(store.sweep_expired(), 0u) << "the reset entry is live, with the new window's expiry";
    clock.advance(9'999);  // its expiry millisecond: still there
    EXPECT_EQ(store.inspect(p, "k").windows.at(0).remaining, 2);
    clock.advance(1);
    EXPECT_EQ(store.sweep_expired(), 1u);
}

TEST(MemoryMap, AnExpiredEntryNothingAdmitsIsInvisibleAndSwept) {
    // A check that admits nothing writes nothing: the expired entry it found stays, invisible
    // (the check answers as for an absent key), until the sweep drops it.
    ManualClock clock{T0};
    MemoryStore store{clock};
    const Policy p = make_policy(Algorithm::fixed_window, 3, 10'000);
    ASSERT_TRUE(store.decide(p, "k", 3).allowed);
    clock.advance(10'000);
    const auto denied = store.decide(p, "k", 4);  // more than the limit: denied on an empty window
    EXPECT_FALSE(denied.allowed);
    EXPECT_EQ(denied.windows.at(0).remaining, 3) << "answered as a missing key";
    EXPECT_EQ(store.inspect(p, "k").windows.at(0).remaining, 3);
    EXPECT_FALSE(store.forget("k")) << "no live state to forget";
    ASSERT_TRUE(store.decide(p, "k", 3).allowed);
    clock.advance(10'000);
    store.decide(p, "k", 4);
    EXPECT_EQ(store.key_count(), 1u);
    EXPECT_EQ(store.sweep_expired(), 1u);
    EXPECT_EQ(store.key_count(), 0u);
}

TEST(MemoryMap, AnEntryOfAnotherAlgorithmIsResetInPlace) {
    ManualClock clock{T0};
    MemoryStore store{clock};
    const Policy sl = make_policy(Algorithm::sliding_log, 2, 60'000);
    const Policy tb = make_policy(Algorithm::token_bucket, 2, 60'000);
    ASSERT_TRUE(store.decide(sl, "k", 2).allowed);
    ASSERT_FALSE(store.decide(sl, "k", 1).allowed);
    // The policy's algorithm changed (a reload): the log's entry counts as absent.
    EXPECT_EQ(store.decide(tb, "k", 1).windows.at(0).remaining, 1);
    EXPECT_EQ(store.key_count(), 1u);
    // And back: a fresh log, not the old one.
    EXPECT_EQ(store.decide(sl, "k", 1).windows.at(0).remaining, 1);
    EXPECT_EQ(store.key_count(), 1u);
}

}  // namespace
}  // namespace ratelimitd::store::memory
