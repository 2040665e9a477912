// MemoryStore after a reload changed a policy's numbers under the same keys: the state left
// by the old numbers is read in the new ones, as lua/*.lua read it (see README "Reloading").
#include "ratelimitd/store/memory/memory_store.hpp"

#include "support/manual_clock.hpp"

#include "unit/store/memory_policies.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::store::memory {
namespace {

using ratelimitd::test::T0;
using ratelimitd::test::make_policy;

using policy::Algorithm;
using policy::Policy;
using ratelimitd::testing::ManualClock;


int admitted(MemoryStore& store, const Policy& p, int tries) {
    int n = 0;
    for (int i = 0; i < tries; ++i) n += store.decide(p, "k", 1).allowed;
    return n;
}

const Algorithm every[] = {Algorithm::token_bucket, Algorithm::sliding_log, Algorithm::fixed_window, Algorithm::gcra,
                           Algorithm::sliding_window};

TEST(MemoryStoreReload, ALoweredLimitCountsWhatWasAlreadyAdmitted) {
    for (const Algorithm a : every) {
        ManualClock clock{T0};
        MemoryStore store{clock};
        ASSERT_EQ(admitted(store, make_policy(a, 5, 600'000), 2), 2);
        EXPECT_EQ(admitted(store, make_policy(a, 3, 600'000), 6), 1) << policy::to_string(a);
    }
}

TEST(MemoryStoreReload, ALimitBelowWhatWasUsedLeavesNothingAndNeverLessThanNothing) {
    for (const Algorithm a : every) {
        ManualClock clock{T0};
        MemoryStore store{clock};
        ASSERT_EQ(admitted(store, make_policy(a, 5, 600'000), 4), 4);
        const auto v = store.decide(make_policy(a, 2, 600'000), "k", 1);
        EXPECT_FALSE(v.allowed) << policy::to_string(a);
        EXPECT_EQ(v.windows.at(0).remaining, 0) << policy::to_string(a);
    }
}

TEST(MemoryStoreReload, AChangedWindowKeepsTheUnitsUsed) {
    for (const Algorithm a : {Algorithm::token_bucket, Algorithm::gcra, Algorithm::sliding_window}) {
        for (const std::int64_t to : {300'000, 1'200'000}) {
            ManualClock clock{T0};
            MemoryStore store{clock};
            ASSERT_EQ(admitted(store, make_policy(a, 5, 600'000), 3), 3);
            EXPECT_EQ(admitted(store, make_policy(a, 5, to), 10), 2) << policy::to_string(a) << " to " << to;
        }
    }
}

TEST(MemoryStoreReload, AShortenedFixedWindowEndsWithinTheNewWindow) {
    ManualClock clock{T0};
    MemoryStore store{clock};
    ASSERT_EQ(admitted(store, make_policy(Algorithm::fixed_window, 5, 600'000), 5), 5);
    const Policy shorter = make_policy(Algorithm::fixed_window, 5, 1'000);
    const auto denied = store.decide(shorter, "k", 1);
    EXPECT_FALSE(denied.allowed);
    EXPECT_LE(denied.windows.at(0).reset_after_ms, 1'000);
    clock.advance(1'001);
    EXPECT_EQ(admitted(store, shorter, 8), 5);
}

}  // namespace
}  // namespace ratelimitd::store::memory
