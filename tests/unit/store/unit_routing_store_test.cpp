// UnitRoutingStore over two embedded stores: each check reaches the store of its limit's unit
// (envoyproxy/ratelimit's SECOND limits the per-second one), and a call split between them is
// charged as one store charges it (apply_split).
#include "ratelimitd/store/memory/memory_store.hpp"
#include "ratelimitd/store/unit_routing_store.hpp"

#include "support/manual_clock.hpp"
#include "support/run_on_io.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ratelimitd::store {
namespace {

using policy::Algorithm;
using policy::Policy;
using ratelimitd::testing::ManualClock;
using test::run_on_io;

constexpr std::int64_t T0 = 1'700'000'000'000;

Policy make_policy(std::string name, Algorithm a, std::int64_t limit, std::int64_t window_ms) {
    Policy p;
    p.name = std::move(name);
    p.algorithm = a;
    p.limit = limit;
    p.burst = limit;
    p.window = std::chrono::milliseconds(window_ms);
    return p;
}

class UnitRouting : public ::testing::Test {
protected:
    /// The count `key` holds for `p` in `store` (a peek: limit minus what is left, plus what is
    /// past the limit).
    static std::int64_t count_in(memory::MemoryStore& store, const Policy& p, const std::string& key) {
        auto v = run_on_io(store.peek(p, key));
        return v ? p.limit - v->windows.front().remaining + v->windows.front().past_limit : -1;
    }
    check::Verdict call(std::uint32_t cost, policy::Part part) {
        std::vector<LimitCheck> checks{LimitCheck{&per_second_limit_, "s", cost, policy::Mode::check, 0, part},
                                       LimitCheck{&per_minute_limit_, "m", cost, policy::Mode::check, 0, part}};
        auto v = run_on_io(routed_.apply_all(std::move(checks)));
        EXPECT_TRUE(v.has_value());
        return v ? *v : check::Verdict{};
    }

    ManualClock clock_{T0};
    memory::MemoryStore other_units_{clock_};
    memory::MemoryStore per_second_{clock_};
    UnitRoutingStore routed_{other_units_, per_second_};
    const Policy per_second_limit_ = make_policy("s", Algorithm::erl_fixed_window, 50, 1'000);
    const Policy per_minute_limit_ = make_policy("m", Algorithm::erl_fixed_window, 1, 60'000);
};

TEST_F(UnitRouting, OnlyEnvoyproxyRatelimitsSecondLimitsCountPerSecond) {
    EXPECT_TRUE(counts_per_second(per_second_limit_));
    EXPECT_FALSE(counts_per_second(per_minute_limit_));
    EXPECT_FALSE(counts_per_second(make_policy("tb", Algorithm::token_bucket, 5, 1'000)));
    EXPECT_FALSE(counts_per_second(make_policy("fw", Algorithm::fixed_window, 5, 1'000)));
}

TEST_F(UnitRouting, EachCheckReachesItsUnitsStoreAlone) {
    ASSERT_TRUE(run_on_io(routed_.apply(per_second_limit_, "s", 3)));
    ASSERT_TRUE(run_on_io(routed_.apply(per_minute_limit_, "m", 1)));
    EXPECT_EQ(count_in(per_second_, per_second_limit_, "s"), 3);
    EXPECT_EQ(count_in(other_units_, per_second_limit_, "s"), 0);
    EXPECT_EQ(count_in(other_units_, per_minute_limit_, "m"), 1);
    EXPECT_EQ(count_in(per_second_, per_minute_limit_, "m"), 0);
    // a reset names no unit: both stores forget the key
    EXPECT_EQ(run_on_io(routed_.reset("s")).value(), true);
    EXPECT_EQ(count_in(per_second_, per_second_limit_, "s"), 0);
}

// envoy_denied_calls: refuse (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=true): the second call takes
// the minute limit past 1, so only it is charged; the second limit answers its count unchanged.
TEST_F(UnitRouting, ASplitDecidingCallChargesOnlyTheLimitGoingPast) {
    const auto first = call(1, policy::Part::decide);
    EXPECT_TRUE(first.allowed);
    EXPECT_EQ(first.windows[0].remaining, 49);
    EXPECT_EQ(first.windows[1].remaining, 0);
    const auto second = call(1, policy::Part::decide);
    EXPECT_FALSE(second.allowed);
    ASSERT_EQ(second.windows.size(), 2u);
    EXPECT_TRUE(second.windows[0].allowed);
    EXPECT_EQ(second.windows[0].remaining, 49);
    EXPECT_FALSE(second.windows[1].allowed);
    EXPECT_EQ(second.windows[1].past_limit, 1);
    EXPECT_EQ(count_in(per_second_, per_second_limit_, "s"), 1);
    EXPECT_EQ(count_in(other_units_, per_minute_limit_, "m"), 2);
}

// envoy_denied_calls: charge (its default): both charged on every call, each its own verdict.
TEST_F(UnitRouting, ASplitChargingCallChargesBoth) {
    call(1, policy::Part::charge);
    const auto second = call(1, policy::Part::charge);
    EXPECT_FALSE(second.allowed);
    EXPECT_TRUE(second.windows[0].allowed);
    EXPECT_EQ(second.windows[0].remaining, 48);
    EXPECT_FALSE(second.windows[1].allowed);
    EXPECT_EQ(count_in(per_second_, per_second_limit_, "s"), 2);
    EXPECT_EQ(count_in(other_units_, per_minute_limit_, "m"), 2);
}

// An ask (hits_addend 0) is only read: it denies once nothing is left, and charges nothing.
TEST_F(UnitRouting, ASplitAskIsReadNeverCharged) {
    call(1, policy::Part::decide);  // the minute limit now has nothing left
    std::vector<LimitCheck> checks{LimitCheck{&per_second_limit_, "s", 1, policy::Mode::check, 0, policy::Part::decide},
                                   LimitCheck{&per_minute_limit_, "m", 0, policy::Mode::check, 0, policy::Part::ask}};
    auto v = run_on_io(routed_.apply_all(std::move(checks)));
    ASSERT_TRUE(v.has_value());
    EXPECT_FALSE(v->allowed);
    EXPECT_FALSE(v->windows[1].allowed);
    EXPECT_GE(v->windows[1].retry_after_s, 1);
    EXPECT_EQ(count_in(other_units_, per_minute_limit_, "m"), 1);
    EXPECT_EQ(count_in(per_second_, per_second_limit_, "s"), 1) << "not charged: the ask did not fit";
}

}  // namespace
}  // namespace ratelimitd::store
