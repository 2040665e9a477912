// Coalescer without sockets: queue order, batch and in-flight limits, slot grouping, and
// checks whose deadline passes while they queue.
#include "ratelimitd/store/redis/coalescer.hpp"

#include "ratelimitd/store/redis/cluster/key_slot.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {
namespace {

using namespace std::chrono_literals;
using time_point = Coalescer::time_point;

const time_point t0 = time_point{} + 1h;

QueuedCheck check_on(std::string key, time_point deadline = t0 + 100ms) {
    QueuedCheck c;
    c.args.key = std::move(key);
    c.deadline = deadline;
    return c;
}

std::vector<std::string> keys_of(const std::vector<QueuedCheck>& batch) {
    std::vector<std::string> keys;
    for (const auto& c : batch) keys.push_back(c.args.key);
    return keys;
}

// fill_per_call 0: no fill rule, a waiting check leaves whenever fewer than max_in_flight
// calls are out (the tests of the fill rule set their own).
Coalescing limits(std::size_t max_batch, std::size_t max_in_flight, bool one_slot = false) {
    Coalescing c;
    c.max_batch = max_batch;
    c.max_in_flight = max_in_flight;
    c.one_slot_per_batch = one_slot;
    c.fill_per_call = 0;
    return c;
}

TEST(Coalescer, AnEmptyQueueGivesNothing) {
    Coalescer q(limits(64, 4));
    EXPECT_FALSE(q.take(0).has_value());
}

TEST(Coalescer, ABatchKeepsQueueOrder) {
    Coalescer q(limits(64, 4));
    for (const char* k : {"a", "b", "c"}) q.push(check_on(k));
    auto batch = q.take(0);
    ASSERT_TRUE(batch.has_value());
    EXPECT_EQ(keys_of(*batch), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_TRUE(q.empty());
}

TEST(Coalescer, ABatchHoldsAtMostMaxBatchAndTheRestWaitsInOrder) {
    Coalescer q(limits(2, 4));
    for (const char* k : {"a", "b", "c", "d", "e"}) q.push(check_on(k));
    EXPECT_EQ(keys_of(*q.take(0)), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(keys_of(*q.take(1)), (std::vector<std::string>{"c", "d"}));
    EXPECT_EQ(keys_of(*q.take(2)), (std::vector<std::string>{"e"}));
    EXPECT_FALSE(q.take(3).has_value());
}

TEST(Coalescer, NothingLeavesWhileMaxInFlightCallsAreOut) {
    Coalescer q(limits(64, 2));
    q.push(check_on("a"));
    EXPECT_FALSE(q.take(2).has_value());
    EXPECT_FALSE(q.take(3).has_value());
    EXPECT_EQ(q.size(), 1u) << "a refused take leaves the queue as it was";
    // A check pushed while the calls are out joins the waiting one: they leave together.
    q.push(check_on("b"));
    EXPECT_EQ(keys_of(*q.take(1)), (std::vector<std::string>{"a", "b"}));
}

TEST(Coalescer, ALoneCheckLeavesAtOnceWhenNoCallIsOut) {
    Coalescer q(Coalescing{});  // the defaults: fill_per_call 8
    q.push(check_on("a"));
    EXPECT_EQ(keys_of(*q.take(0)), (std::vector<std::string>{"a"})) << "an idle server adds no delay";
}

TEST(Coalescer, AnotherCallLeavesOnlyWhenEnoughChecksWaitPerCallOut) {
    Coalescing c = limits(64, 4);
    c.fill_per_call = 3;
    Coalescer q(c);
    for (const char* k : {"a", "b"}) q.push(check_on(k));
    EXPECT_FALSE(q.take(1).has_value()) << "2 checks wait, one call is out: they wait for its reply";
    EXPECT_EQ(q.size(), 2u);
    q.push(check_on("c"));
    EXPECT_EQ(keys_of(*q.take(1)), (std::vector<std::string>{"a", "b", "c"})) << "3 = 1 call out x 3";
    for (const char* k : {"d", "e", "f", "g", "h"}) q.push(check_on(k));
    EXPECT_FALSE(q.take(2).has_value()) << "5 wait; a third call needs 2 x 3";
    q.push(check_on("i"));
    EXPECT_EQ(q.take(2)->size(), 6u);
}

TEST(Coalescer, ChecksThatWaitedForAReplyLeaveWhenTheLastCallIsAnswered) {
    Coalescing c = limits(64, 4);
    c.fill_per_call = 8;
    Coalescer q(c);
    q.push(check_on("a"));
    EXPECT_FALSE(q.take(1).has_value());
    EXPECT_EQ(keys_of(*q.take(0)), (std::vector<std::string>{"a"})) << "no call out: nothing to wait for";
}

TEST(Coalescer, LimitsBelowOneCountAsOne) {
    Coalescer q(limits(0, 0));
    EXPECT_EQ(q.limits().max_batch, 1u);
    EXPECT_EQ(q.limits().max_in_flight, 1u);
    q.push(check_on("a"));
    q.push(check_on("b"));
    EXPECT_EQ(keys_of(*q.take(0)), (std::vector<std::string>{"a"}));
    EXPECT_FALSE(q.take(1).has_value());
}

TEST(Coalescer, OneSlotPerBatchTakesTheFirstChecksSlotAndKeepsTheOthersInOrder) {
    // {x} and {y} hash to different slots; keys with the same tag share one.
    ASSERT_NE(cluster::key_slot("{x}"), cluster::key_slot("{y}"));
    Coalescer q(limits(64, 4, true));
    for (const char* k : {"{x}1", "{y}1", "{x}2", "{y}2", "{x}3"}) q.push(check_on(k));
    auto first = q.take(0);
    EXPECT_EQ(keys_of(*first), (std::vector<std::string>{"{x}1", "{x}2", "{x}3"}));
    for (const auto& c : *first) EXPECT_EQ(c.slot, cluster::key_slot("{x}"));
    EXPECT_EQ(keys_of(*q.take(1)), (std::vector<std::string>{"{y}1", "{y}2"}));
}

TEST(Coalescer, OneSlotPerBatchStillStopsAtMaxBatch) {
    Coalescer q(limits(2, 4, true));
    for (const char* k : {"{x}1", "{y}1", "{x}2", "{x}3"}) q.push(check_on(k));
    EXPECT_EQ(keys_of(*q.take(0)), (std::vector<std::string>{"{x}1", "{x}2"}));
    EXPECT_EQ(keys_of(*q.take(1)), (std::vector<std::string>{"{y}1"}));
    EXPECT_EQ(keys_of(*q.take(2)), (std::vector<std::string>{"{x}3"}));
}

TEST(Coalescer, WithoutOneSlotPerBatchSlotsMixAndAreNotComputed) {
    Coalescer q(limits(64, 4));
    q.push(check_on("{x}1"));
    q.push(check_on("{y}1"));
    auto batch = q.take(0);
    EXPECT_EQ(keys_of(*batch), (std::vector<std::string>{"{x}1", "{y}1"}));
    EXPECT_EQ(batch->front().slot, -1);
}

TEST(Coalescer, ChecksWhoseDeadlinePassedWhileQueuedAreTakenOutNotSent) {
    Coalescer q(limits(64, 1));
    q.push(check_on("late", t0 + 10ms));
    q.push(check_on("fresh", t0 + 100ms));
    q.push(check_on("on-time", t0 + 50ms));
    // At t0 + 50 ms: "late" has expired, and a deadline of exactly now has too.
    auto expired = q.take_expired(t0 + 50ms);
    EXPECT_EQ(keys_of(expired), (std::vector<std::string>{"late", "on-time"}));
    EXPECT_EQ(keys_of(*q.take(0)), (std::vector<std::string>{"fresh"}));
}

TEST(Coalescer, NothingExpiresBeforeItsDeadline) {
    Coalescer q(limits(64, 1));
    q.push(check_on("a", t0 + 10ms));
    EXPECT_TRUE(q.take_expired(t0 + 9ms).empty());
    EXPECT_EQ(q.size(), 1u);
}

TEST(Coalescer, ABatchWaitsNoLongerThanItsEarliestDeadline) {
    Coalescer q(limits(64, 4));
    q.push(check_on("a", t0 + 90ms));
    q.push(check_on("b", t0 + 30ms));  // e.g. a cluster check already redirected once
    q.push(check_on("c", t0 + 60ms));
    EXPECT_EQ(batch_deadline(*q.take(0)), t0 + 30ms);
}

TEST(Coalescer, TakeAllEmptiesTheQueueInOrder) {
    Coalescer q(limits(1, 1));
    for (const char* k : {"a", "b", "c"}) q.push(check_on(k));
    EXPECT_EQ(keys_of(q.take_all()), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace ratelimitd::store::redis
