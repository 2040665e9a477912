// Coalescing against a real redis-server: checks waiting together leave as one lua/batch.lua
// call (counted by Redis itself), are decided in arrival order, stay exact, and fail alone.
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/redis_store.hpp"
#include "support/processes.hpp"
#include "support/run_until.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <tuple>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ratelimitd::test::coalescing_test {
namespace {

namespace net = boost::asio;
using namespace std::chrono_literals;
using store::redis::Coalescing;
using store::redis::RedisStore;

policy::Policy make_policy(policy::Algorithm a, std::int64_t limit) {
    policy::Policy p;
    p.name = std::string("co-") + policy::to_string(a);
    p.algorithm = a;
    p.limit = limit;
    p.window = 600s;  // nothing refills or expires during a test
    p.burst = limit;
    return p;
}

/// How many times Redis ran `command` since the last CONFIG RESETSTAT (INFO commandstats).
long long calls_of(const RedisServer& redis, const std::string& command) {
    const std::string info = redis.command({"INFO", "commandstats"});
    const std::string field = "cmdstat_" + command + ":calls=";
    const auto at = info.find(field);
    if (at == std::string::npos) return 0;
    return std::stoll(info.substr(at + field.size()));
}

/// One server thread's RedisStore on an io_context this test runs.
class StoreOnOneThread {
public:
    StoreOnOneThread(const RedisServer& redis, std::chrono::milliseconds timeout, Coalescing coalescing) {
        auto endpoint = store::redis::parse_redis_url(redis.url());
        if (!endpoint) throw std::runtime_error(endpoint.error().detail);
        store_ = std::make_unique<RedisStore>(ioc_.get_executor(), *endpoint, timeout, "coalescing-test", 2,
                                              coalescing);
        if (!run_until(ioc_, [this] { return store_->any_ready(); }, 10s)) {
            throw std::runtime_error("RedisStore did not connect to " + redis.url());
        }
    }

    ~StoreOnOneThread() {
        store_->stop();
        work_.reset();
        ioc_.poll();
        store_.reset();
    }

    StoreOnOneThread(const StoreOnOneThread&) = delete;
    StoreOnOneThread& operator=(const StoreOnOneThread&) = delete;

    struct Check {
        const policy::Policy* policy;
        std::string key;
    };

    /// Starts every check before any is answered, in this order; returns the verdicts in the
    /// same order.
    std::vector<result<check::Verdict>> apply_together(const std::vector<Check>& checks) {
        auto out = std::make_shared<std::vector<std::optional<result<check::Verdict>>>>(checks.size());
        auto done = std::make_shared<std::size_t>(0);
        for (std::size_t i = 0; i < checks.size(); ++i) {
            net::co_spawn(
                ioc_,
                [this, out, done, i, c = checks[i]]() -> net::awaitable<void> {
                    (*out)[i].emplace(co_await store_->apply(*c.policy, c.key, 1));
                    ++*done;
                },
                net::detached);
        }
        if (!run_until(ioc_, [&] { return *done == checks.size(); }, 30s)) {
            throw std::runtime_error("the store answered " + std::to_string(*done) + " of " +
                                     std::to_string(checks.size()) + " checks within 30 s");
        }
        std::vector<result<check::Verdict>> verdicts;
        for (auto& v : *out) verdicts.push_back(std::move(*v));
        return verdicts;
    }

    RedisStore& store() { return *store_; }

private:
    net::io_context ioc_{1};
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work_{ioc_.get_executor()};
    std::unique_ptr<RedisStore> store_;
};

class RedisCoalescing : public ::testing::Test {
protected:
    static void TearDownTestSuite() {
        delete redis_;
        redis_ = nullptr;
    }
    void SetUp() override {
        if (redis_ == nullptr) redis_ = new RedisServer();
        ASSERT_EQ(redis_->command({"FLUSHALL"}), "OK");
    }
    void reset_stats() { ASSERT_EQ(redis_->command({"CONFIG", "RESETSTAT"}), "OK"); }

    static RedisServer* redis_;
};
RedisServer* RedisCoalescing::redis_ = nullptr;

TEST_F(RedisCoalescing, ChecksStartedTogetherLeaveAsOneCallPerBatch) {
    StoreOnOneThread lane(*redis_, 5s, Coalescing{});
    const auto p = make_policy(policy::Algorithm::sliding_log, 30);
    const std::string key = policy::make_key("rl", p.name, "hot", "global");
    reset_stats();

    const auto verdicts = lane.apply_together(std::vector<StoreOnOneThread::Check>(100, {&p, key}));

    // 100 checks, at most 64 per call: two script calls, counted by Redis itself.
    EXPECT_EQ(calls_of(*redis_, "evalsha"), 2);
    EXPECT_EQ(lane.store().batches_sent(), 2u);
    EXPECT_EQ(lane.store().checks_batched(), 100u);
    int admitted = 0;
    for (const auto& v : verdicts) {
        ASSERT_TRUE(v) << v.error().detail;
        admitted += v->allowed ? 1 : 0;
    }
    EXPECT_EQ(admitted, 30);
    EXPECT_EQ(redis_->integer({"ZCARD", key}), 30);
}

TEST_F(RedisCoalescing, ChecksOfOneBatchAreDecidedInArrivalOrder) {
    // One full batch (max_batch checks). Two batches may go out on two connections, and Redis
    // may run either first: order holds within a batch (and a connection), as for any
    // concurrent requests.
    StoreOnOneThread lane(*redis_, 5s, Coalescing{});
    const auto p = make_policy(policy::Algorithm::sliding_log, 30);
    const std::string key = policy::make_key("rl", p.name, "ordered", "global");
    reset_stats();

    const auto verdicts = lane.apply_together(std::vector<StoreOnOneThread::Check>(64, {&p, key}));

    EXPECT_EQ(calls_of(*redis_, "evalsha"), 1);
    for (std::size_t i = 0; i < verdicts.size(); ++i) {
        ASSERT_TRUE(verdicts[i]) << i << ": " << verdicts[i].error().detail;
        if (i < 30) {
            EXPECT_TRUE(verdicts[i]->allowed) << i;
            EXPECT_EQ(verdicts[i]->windows.at(0).remaining, 29 - static_cast<std::int64_t>(i)) << i;
        } else {
            EXPECT_FALSE(verdicts[i]->allowed) << i;
        }
    }
}

TEST_F(RedisCoalescing, EveryAlgorithmIsExactInsideMixedBatches) {
    StoreOnOneThread lane(*redis_, 5s, Coalescing{});
    const auto tb = make_policy(policy::Algorithm::token_bucket, 7);
    const auto sl = make_policy(policy::Algorithm::sliding_log, 11);
    const auto fw = make_policy(policy::Algorithm::fixed_window, 13);
    const auto gc = make_policy(policy::Algorithm::gcra, 9);
    const auto sw = make_policy(policy::Algorithm::sliding_window, 17);
    std::vector<StoreOnOneThread::Check> checks;
    for (int i = 0; i < 40; ++i) {  // interleaved: every batch holds every algorithm
        checks.push_back({&tb, policy::make_key("rl", tb.name, "t", "global")});
        checks.push_back({&sl, policy::make_key("rl", sl.name, "t", "global")});
        checks.push_back({&fw, policy::make_key("rl", fw.name, "t", "global")});
        checks.push_back({&gc, policy::make_key("rl", gc.name, "t", "global")});
        checks.push_back({&sw, policy::make_key("rl", sw.name, "t", "global")});
    }
    const auto verdicts = lane.apply_together(checks);

    std::map<std::string, int> admitted;
    for (std::size_t i = 0; i < verdicts.size(); ++i) {
        ASSERT_TRUE(verdicts[i]) << verdicts[i].error().detail;
        if (verdicts[i]->allowed) ++admitted[checks[i].policy->name];
    }
    EXPECT_EQ(admitted[tb.name], 7);
    EXPECT_EQ(admitted[sl.name], 11);
    EXPECT_EQ(admitted[fw.name], 13);
    EXPECT_EQ(admitted[gc.name], 9);
    EXPECT_EQ(admitted[sw.name], 17);
    EXPECT_LT(lane.store().batches_sent(), verdicts.size()) << "nothing was coalesced";
    for (const auto& key : redis_->keys()) EXPECT_GT(redis_->integer({"PTTL", key}), 0) << key;
}

// Issue 36 item 7: lua/batch.lua gets each policy's numbers once and answers flat; RedisStore
// rebuilds every verdict. Two policies (one of them twice, under two names: one group of
// numbers), several checks of each on a few keys, in one batch, decide exactly as the same
// checks sent one at a time, and the batch's times are those its scripts computed.
TEST_F(RedisCoalescing, ABatchOfSeveralPoliciesDecidesAsLoneChecksDo) {
    const auto tb = make_policy(policy::Algorithm::token_bucket, 2);
    auto tb_twin = tb;
    tb_twin.name = "co-token_bucket-twin";
    const auto sw = make_policy(policy::Algorithm::sliding_window, 4);
    auto checks_under = [&](const std::string& tenant) {
        std::vector<StoreOnOneThread::Check> checks;
        for (int i = 0; i < 6; ++i) {
            checks.push_back({&tb, policy::make_key("rl", tb.name, tenant + std::to_string(i % 2), "global")});
            checks.push_back({&sw, policy::make_key("rl", sw.name, tenant, "global")});
            checks.push_back({&tb_twin, policy::make_key("rl", tb_twin.name, tenant, "global")});
        }
        return checks;
    };
    std::vector<result<check::Verdict>> alone;
    {
        StoreOnOneThread lane(*redis_, 5s, Coalescing{.enabled = false});
        for (const auto& c : checks_under("alone")) alone.push_back(lane.apply_together({c}).front());
    }
    StoreOnOneThread lane(*redis_, 5s, Coalescing{});
    reset_stats();
    const auto before_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
    const auto batched = lane.apply_together(checks_under("batched"));
    const auto after_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
    ASSERT_EQ(calls_of(*redis_, "evalsha"), 1) << "one batch";

    ASSERT_EQ(batched.size(), alone.size());
    int denied = 0;
    for (std::size_t i = 0; i < batched.size(); ++i) {
        ASSERT_TRUE(batched[i]) << i << ": " << batched[i].error().detail;
        ASSERT_TRUE(alone[i]) << i << ": " << alone[i].error().detail;
        const auto& b = batched[i]->windows.at(0);
        const auto& a = alone[i]->windows.at(0);
        EXPECT_EQ(std::tie(b.policy, b.allowed, b.limit, b.window_s, b.remaining),
                  std::tie(a.policy, a.allowed, a.limit, a.window_s, a.remaining))
            << i;
        // The instants differ (one batch, lone calls one after another): the times must be what
        // the scripts compute from the batch's reset_after_ms.
        EXPECT_EQ(b.reset_after_s, (b.reset_after_ms + 999) / 1000) << i;
        EXPECT_EQ(b.retry_after_s, b.allowed ? 0 : std::max<std::int64_t>(1, b.reset_after_s)) << i;
        EXPECT_GE(b.reset_epoch_s, (before_ms - 1000 + b.reset_after_ms + 999) / 1000) << i;
        EXPECT_LE(b.reset_epoch_s, (after_ms + 1000 + b.reset_after_ms + 999) / 1000) << i;
        if (!b.allowed) ++denied;
    }
    // tb: 2 of 3 on each of its two keys, the twin 2 of 6 on one, sw 4 of 6.
    EXPECT_EQ(denied, 2 + 4 + 2);
}

// Issue 17 (a reload that changes a policy's algorithm): a key another algorithm wrote is no
// longer a WRONGTYPE error; the check starts afresh and replaces it, in a batch as alone.
TEST_F(RedisCoalescing, ACheckWhoseKeyHoldsAnotherTypeStartsAfreshAndTheOthersAreCharged) {
    StoreOnOneThread lane(*redis_, 5s, Coalescing{});
    const auto p = make_policy(policy::Algorithm::fixed_window, 5);
    const std::string good_a = policy::make_key("rl", p.name, "a", "global");
    const std::string bad = policy::make_key("rl", p.name, "bad", "global");
    const std::string good_b = policy::make_key("rl", p.name, "b", "global");
    ASSERT_EQ(redis_->command({"HSET", bad, "not", "a counter"}), "1");

    const auto verdicts = lane.apply_together({{&p, good_a}, {&p, bad}, {&p, good_b}});

    ASSERT_TRUE(verdicts[0]) << verdicts[0].error().detail;
    EXPECT_TRUE(verdicts[0]->allowed);
    ASSERT_TRUE(verdicts[1]) << verdicts[1].error().detail;
    EXPECT_TRUE(verdicts[1]->allowed);
    EXPECT_EQ(verdicts[1]->windows.at(0).remaining, 4);
    EXPECT_EQ(redis_->command({"GET", bad}), "1") << "the hash was replaced by the counter";
    ASSERT_TRUE(verdicts[2]) << verdicts[2].error().detail;
    EXPECT_TRUE(verdicts[2]->allowed);
    EXPECT_EQ(redis_->command({"GET", good_a}), "1");
    EXPECT_EQ(redis_->command({"GET", good_b}), "1");
}

TEST_F(RedisCoalescing, AFlushedScriptCacheIsReloadedForABatch) {
    StoreOnOneThread lane(*redis_, 5s, Coalescing{});
    const auto p = make_policy(policy::Algorithm::token_bucket, 50);
    const std::string key = policy::make_key("rl", p.name, "flushed", "global");
    ASSERT_EQ(redis_->command({"SCRIPT", "FLUSH"}), "OK");
    reset_stats();

    const auto verdicts = lane.apply_together(std::vector<StoreOnOneThread::Check>(20, {&p, key}));

    for (const auto& v : verdicts) {
        ASSERT_TRUE(v) << v.error().detail;
        EXPECT_TRUE(v->allowed);
    }
    EXPECT_EQ(calls_of(*redis_, "eval"), 1) << "one EVAL after NOSCRIPT, for the whole batch";
}

TEST_F(RedisCoalescing, WhenDisabledEveryCheckIsItsOwnCall) {
    StoreOnOneThread lane(*redis_, 5s, Coalescing{.enabled = false});
    const auto p = make_policy(policy::Algorithm::fixed_window, 8);
    const std::string key = policy::make_key("rl", p.name, "solo", "global");
    reset_stats();

    const auto verdicts = lane.apply_together(std::vector<StoreOnOneThread::Check>(20, {&p, key}));

    int admitted = 0;
    for (const auto& v : verdicts) {
        ASSERT_TRUE(v) << v.error().detail;
        admitted += v->allowed ? 1 : 0;
    }
    EXPECT_EQ(admitted, 8);
    EXPECT_EQ(calls_of(*redis_, "evalsha"), 20);
    EXPECT_EQ(lane.store().batches_sent(), 0u);
}

TEST_F(RedisCoalescing, QueuedChecksFailByTheirDeadlineWhenRedisHangs) {
    // More checks than max_batch * max_in_flight, so some wait in the queue behind calls
    // that never come back: every one must still end by its own deadline.
    StoreOnOneThread lane(*redis_, 200ms, Coalescing{});
    const auto p = make_policy(policy::Algorithm::token_bucket, 1000);
    const std::string key = policy::make_key("rl", p.name, "hung", "global");
    redis_->pause();
    const auto started = std::chrono::steady_clock::now();
    const auto verdicts = lane.apply_together(std::vector<StoreOnOneThread::Check>(400, {&p, key}));
    const auto took = std::chrono::steady_clock::now() - started;
    redis_->resume();

    for (const auto& v : verdicts) {
        ASSERT_FALSE(v);
        EXPECT_TRUE(v.error().code == errc::store_timeout || v.error().code == errc::store_unavailable)
            << v.error().detail;
    }
    // Each waited at most its 200 ms deadline; 2 s leaves room for a slow machine.
    EXPECT_LT(took, 2s);
}

}  // namespace
}  // namespace ratelimitd::test::coalescing_test
