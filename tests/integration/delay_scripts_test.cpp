// max_delay in lua/token_bucket.lua and lua/gcra.lua on a real redis-server, step for step
// against the embedded store: the same reservations, delays and denials at the same instants
// (the scripts take the instant as ARGV[7], the queue in their member, ";delay:<units>", as
// script_args.cpp writes it).
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/store/memory/memory_store.hpp"
#include "ratelimitd/store/redis/lua_sources.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "support/manual_clock.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace ratelimitd::test::delay_scripts_test {
namespace {

using policy::Algorithm;
using policy::Policy;
using namespace std::chrono_literals;

std::string source_of(std::string_view name) {
    for (const auto& s : store::redis::lua_sources()) {
        if (s.name == name) return std::string(s.text);
    }
    throw std::runtime_error("no script " + std::string(name));
}

// The script's reply as redis-cli prints it: allowed (1 + the delay when reserved), limit,
// remaining, reset_epoch_s, retry_after_s, reset_after_s, reset_after_ms.
std::string text_of(const check::Verdict& v) {
    const auto& w = v.windows.front();
    std::ostringstream s;
    s << (w.allowed ? 1 + w.delay_ms : 0) << " " << w.limit << " " << w.remaining << " " << w.reset_epoch_s << " "
      << w.retry_after_s << " " << w.reset_after_s << " " << w.reset_after_ms;
    return s.str();
}

// The first number of a reply: 0 denied, 1 admitted now, 1 + d admitted after d ms.
std::int64_t first_of(const std::string& reply) { return std::stoll(reply.substr(0, reply.find(' '))); }

// The wait of a denial: reset_after_ms, the last number.
std::int64_t wait_of(const std::string& reply) { return std::stoll(reply.substr(reply.rfind(' ') + 1)); }

class DelayScriptsMatchEmbedded : public ::testing::TestWithParam<Algorithm> {
protected:
    static void TearDownTestSuite() {
        delete redis_;
        redis_ = nullptr;
    }
    void SetUp() override {
        if (redis_ == nullptr) redis_ = new RedisServer();
        ASSERT_EQ(redis_->command({"FLUSHALL"}), "OK");
    }

    /// rate `limit` per `window`, `burst` at once, then reservations up to `max_delay`.
    Policy policy(std::int64_t limit, std::chrono::milliseconds window, std::int64_t burst,
                  std::chrono::milliseconds max_delay) const {
        Policy p;
        p.name = std::string("delay-") + policy::to_string(GetParam());
        p.algorithm = GetParam();
        p.limit = limit;
        p.window = window;
        p.burst = burst;
        p.max_delay = max_delay;
        p.queue_units = max_delay.count() * limit;  // as delay_limits.cpp computes it
        return p;
    }

    /// A check of `cost` at `now` on both stores: the script's reply, the embedded store's.
    std::pair<std::string, std::string> check(const Policy& p, const std::string& key, std::int64_t cost,
                                              std::int64_t now) {
        clock_.set(now);
        // The member exactly as the Redis store sends it (its layout, then ";delay:<units>").
        const auto args = store::redis::check_args(p, key, static_cast<std::uint32_t>(cost), members_);
        const std::string script = redis_->command(
            {"EVAL", source_of(policy::to_string(p.algorithm)), "1", key, std::to_string(p.limit),
             std::to_string(p.window.count()), std::to_string(p.burst), std::to_string(cost), args.member, "",
             std::to_string(now)});
        return {script, text_of(memory_.decide(p, key, static_cast<std::uint32_t>(cost)))};
    }

    static RedisServer* redis_;
    ratelimitd::testing::ManualClock clock_;
    store::memory::MemoryStore memory_{clock_};
    store::redis::MemberSource members_{"delay-test"};
};
RedisServer* DelayScriptsMatchEmbedded::redis_ = nullptr;

// The figure: rate 10/s, burst 5, max_delay 10 s, 200 checks at one instant. 5 pass at
// once, 100 are reserved 100 ms apart up to exactly 10 s, the other 95 are denied until the
// first reservation is due; both stores give every number alike.
TEST_P(DelayScriptsMatchEmbedded, TwoHundredAtOnceAreFiveNowAHundredSpacedByTheRateAndTheRestDenied) {
    const Policy p = policy(10, 1s, 5, 10s);
    const std::string k = policy::make_key("rl", p.name, "t", "global");
    const std::int64_t t = SystemClock{}.now_ms();
    std::vector<std::int64_t> delays;
    int at_once = 0;
    int denied = 0;
    for (int i = 0; i < 200; ++i) {
        const auto [script, embedded] = check(p, k, 1, t);
        ASSERT_EQ(script, embedded) << "check " << i;
        const std::int64_t first = first_of(script);
        if (first == 0) {
            ++denied;
            EXPECT_EQ(wait_of(script), 100) << "a denial waits for the first reservation to be due: " << script;
        } else if (first == 1) {
            ++at_once;
        } else {
            delays.push_back(first - 1);
        }
    }
    EXPECT_EQ(at_once, 5);
    EXPECT_EQ(denied, 95);
    ASSERT_EQ(delays.size(), 100u);
    for (std::size_t i = 0; i < delays.size(); ++i) {
        EXPECT_EQ(delays[i], 100 * static_cast<std::int64_t>(i + 1)) << "reservation " << i;
    }
    // Never above the rate: after the burst's first second, each second releases exactly 10.
    std::map<std::int64_t, int> per_second;
    for (const std::int64_t d : delays) ++per_second[d / 1000];
    EXPECT_EQ(per_second[0], 9);  // 100..900 ms, beside the 5 at once: burst + rate - 1
    for (std::int64_t s = 1; s < 10; ++s) EXPECT_EQ(per_second[s], 10) << "second " << s;
    EXPECT_EQ(per_second[10], 1);  // 10000 ms exactly: max_delay itself is admitted
    // The key lives until the bucket is full again: the queue and the burst refilled.
    EXPECT_LE(redis_->integer({"PTTL", k}), (100 + 5) * 100);
}

// Time passing: one more reservation each 100 ms, at the far end of the queue; a check of
// several units reserves them together; once the queue is drained, the burst refills.
TEST_P(DelayScriptsMatchEmbedded, TheQueueMovesWithTimeAndCostsReserveTogether) {
    const Policy p = policy(10, 1s, 5, 2s);
    const std::string k = policy::make_key("rl", p.name, "u", "global");
    const std::int64_t t = SystemClock{}.now_ms();
    const auto same = [&](std::int64_t cost, std::int64_t at) {
        const auto [script, embedded] = check(p, k, cost, at);
        EXPECT_EQ(script, embedded) << "cost " << cost << " at +" << at - t;
        return script;
    };
    for (int i = 0; i < 5; ++i) EXPECT_EQ(first_of(same(1, t)), 1);
    for (int i = 1; i <= 20; ++i) EXPECT_EQ(first_of(same(1, t)), 1 + 100 * i);
    EXPECT_EQ(first_of(same(1, t)), 0);
    EXPECT_EQ(first_of(same(1, t + 100)), 1 + 2000) << "100 ms later, one more, at the far end";
    const std::string half = same(1, t + 150);
    EXPECT_EQ(first_of(half), 0);
    EXPECT_EQ(wait_of(half), 50);
    // The last reservation is due at t + 2100; 500 ms later the bucket holds 5 again.
    EXPECT_EQ(first_of(same(5, t + 2600)), 1);
    EXPECT_EQ(first_of(same(3, t + 2600)), 1 + 300) << "3 units reserved together";
    EXPECT_EQ(first_of(same(5, t + 2600)), 1 + 800) << "5 more, due after the 3";
    EXPECT_EQ(first_of(same(5, t + 2600)), 1 + 1300);
    EXPECT_EQ(first_of(same(5, t + 2600)), 1 + 1800);
    EXPECT_EQ(first_of(same(2, t + 2600)), 1 + 2000) << "the queue's last 2 units: max_delay exactly";
    const std::string full = same(1, t + 2600);
    EXPECT_EQ(first_of(full), 0);
    EXPECT_EQ(wait_of(full), 100) << "one more fits when the first of the queue is due";
}

// nginx's delay=: `burst: 5, delay: 2` is the bucket of 2 with a queue of 3 tokens (the
// config loader's translation): 2 at once, 3 delayed, the 6th denied.
TEST_P(DelayScriptsMatchEmbedded, NginxDelayPassesTheFirstNAtOnceAndQueuesTheRestOfTheBurst) {
    Policy p = policy(10, 1s, 2, 0ms);
    p.max_delay.reset();
    p.delay_at_once = 2;
    p.queued_tokens = 3;
    p.queue_units = 3 * 1000;
    const std::string k = policy::make_key("rl", p.name, "n", "global");
    const std::int64_t t = SystemClock{}.now_ms();
    std::vector<std::int64_t> firsts;
    for (int i = 0; i < 6; ++i) {
        const auto [script, embedded] = check(p, k, 1, t);
        EXPECT_EQ(script, embedded) << "check " << i;
        firsts.push_back(first_of(script));
    }
    EXPECT_EQ(firsts, (std::vector<std::int64_t>{1, 1, 101, 201, 301, 0}));
}

// A policy without a queue sends the member it always sent, and decides as before.
TEST_P(DelayScriptsMatchEmbedded, NoQueueNoDelay) {
    Policy p = policy(10, 1s, 5, 0ms);
    p.max_delay.reset();
    p.queue_units = 0;
    EXPECT_EQ(store::redis::check_args(p, "k", 1, members_).member, "");
    const std::string k = policy::make_key("rl", p.name, "z", "global");
    const std::int64_t t = SystemClock{}.now_ms();
    for (int i = 0; i < 5; ++i) EXPECT_EQ(first_of(check(p, k, 1, t).first), 1);
    const auto [script, embedded] = check(p, k, 1, t);
    EXPECT_EQ(script, embedded);
    EXPECT_EQ(first_of(script), 0);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, DelayScriptsMatchEmbedded,
                         ::testing::Values(Algorithm::token_bucket, Algorithm::gcra),
                         [](const auto& info) { return std::string(policy::to_string(info.param)); });

}  // namespace
}  // namespace ratelimitd::test::delay_scripts_test
