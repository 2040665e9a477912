// The conformance suite (store_conformance.hpp): the concurrency algorithm's leases on every store.
#include "integration/store_conformance.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::test::store_conformance_lease_test {
namespace {

using namespace conformance;

// ---- concurrency leases ----------------------------------------------------------------------

// The concurrency algorithm's own cases (lua/concurrency.lua, memory/concurrency.cpp).
class LeaseConformance : public Conformance {};

TEST_P(LeaseConformance, ReleaseFreesExactlyOneSlotAndOnlyOnce) {
    const Policy p = policy(3, 600s);
    const std::string k = key(p, "leaser");
    std::vector<std::string> leases;
    for (std::int64_t left : {2, 1, 0}) {
        const Observed o = check(p, k, 1);
        ASSERT_TRUE(o.verdict->allowed) << describe(o);
        EXPECT_EQ(o.window().remaining, left);
        EXPECT_EQ(o.window().lease.size(), 32u);
        leases.push_back(o.window().lease);
    }
    EXPECT_EQ(std::set<std::string>(leases.begin(), leases.end()).size(), 3u) << "every lease id is new";
    const Observed full = check(p, k, 1);
    EXPECT_FALSE(full.verdict->allowed);
    EXPECT_TRUE(full.window().lease.empty());
    EXPECT_EQ(full.window().retry_after_s, 600) << "when the oldest lease expires: " << describe(full);

    const Observed freed = lane_->release(p, k, leases[1]);
    ASSERT_TRUE(freed.verdict.has_value()) << describe(freed);
    EXPECT_TRUE(freed.verdict->allowed) << describe(freed);
    EXPECT_EQ(freed.window().remaining, 1);
    EXPECT_EQ(freed.window().reset_after_ms, 0) << "a slot is free now";
    for (const std::string& twice : {leases[1], std::string(32, 'f')}) {
        const Observed none = lane_->release(p, k, twice);
        EXPECT_FALSE(none.verdict->allowed) << describe(none);
        EXPECT_EQ(none.window().remaining, 1);
    }
    EXPECT_TRUE(check(p, k, 1).verdict->allowed);
    EXPECT_FALSE(check(p, k, 1).verdict->allowed) << "the release freed one slot, not more";
}

TEST_P(LeaseConformance, AnUnreleasedLeaseExpiresAndCannotBeReleasedAfter) {
    const Policy p = policy(1, 400ms);
    const std::string k = key(p, "forgetful");
    const Observed held = check(p, k, 1);
    ASSERT_TRUE(held.verdict->allowed);
    const Observed denied = check(p, k, 1);
    ASSERT_FALSE(denied.verdict->allowed);
    EXPECT_LE(denied.window().reset_after_ms, 400);
    // Awaited: the slot comes back when the lease ends, not before.
    Observed again = check(p, k, 1);
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (!again.verdict->allowed && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(5ms);  // a poll of the awaited condition, not a guess
        again = check(p, k, 1);
    }
    ASSERT_TRUE(again.verdict->allowed);
    EXPECT_GE(again.after_ms, held.before_ms + 400) << describe(again);
    const Observed late = lane_->release(p, k, held.window().lease);
    EXPECT_FALSE(late.verdict->allowed) << "an expired lease frees nothing: " << describe(late);
    EXPECT_EQ(late.window().remaining, 0) << "the new holder keeps its slot";
}

TEST_P(LeaseConformance, ALayeredCheckDeniedByAnotherLimitHoldsNoSlot) {
    const Policy slots = policy(3, 600s);
    Policy hourly = policy(1, 600s);
    hourly.name = "conf-hourly";
    hourly.algorithm = Algorithm::fixed_window;
    const std::string ks = key(slots, "layered");
    const std::string kh = key(hourly, "layered");
    const auto both = [&] {
        std::vector<store::LimitCheck> checks{{&slots, ks, 1}, {&hourly, kh, 1}};
        Observed o = lane_->apply_all(std::move(checks));
        if (!o.verdict) throw std::runtime_error(describe(o));
        return o;
    };
    const Observed first = both();
    ASSERT_TRUE(first.verdict->allowed) << describe(first);
    EXPECT_EQ(first.verdict->windows[0].lease.size(), 32u);
    const Observed second = both();
    ASSERT_FALSE(second.verdict->allowed);
    EXPECT_TRUE(second.verdict->windows[0].allowed);
    EXPECT_EQ(second.verdict->windows[0].remaining, 2) << "the denied check took no slot";
    EXPECT_TRUE(second.verdict->windows[0].lease.empty());
    const Observed alone = check(slots, ks, 1);
    EXPECT_EQ(alone.window().remaining, 1);
}

INSTANTIATE_TEST_SUITE_P(Stores, LeaseConformance,
                         ::testing::Combine(::testing::ValuesIn(conformance_kinds()),
                                            ::testing::Values(Algorithm::concurrency)),
                         [](const auto& info) { return std::string(to_string(std::get<0>(info.param))); });

}  // namespace
}  // namespace ratelimitd::test::store_conformance_lease_test
