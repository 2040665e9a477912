// lua/batch.lua's layout against a real redis-server: a batch mixing policies, several checks
// of one policy among them, answers each check exactly as its algorithm's own script answers it
// alone at the same instant (the scripts take it as ARGV[7]), once FlatReply has rebuilt what
// the flat reply leaves out; a check's error fails it alone; a malformed batch charges nothing
// and says what was wrong.
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/store/lease_id.hpp"
#include "ratelimitd/store/redis/batch_args.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/flat_reply.hpp"
#include "ratelimitd/store/redis/node_client.hpp"
#include "ratelimitd/store/redis/scripts.hpp"
#include "ratelimitd/store/redis/verdict_reply.hpp"
#include "support/processes.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ratelimitd::test::flat_batch_test {
namespace {

namespace net = boost::asio;
using namespace std::chrono_literals;
using policy::Algorithm;
using store::redis::CheckArgs;
using store::redis::NodeClient;
using store::redis::ScriptArgs;
using store::redis::Value;

/// One NodeClient on an io_context this test runs.
class NodeOnOneThread {
public:
    explicit NodeOnOneThread(const RedisServer& redis) {
        auto endpoint = store::redis::parse_redis_url(redis.url());
        if (!endpoint) throw std::runtime_error(endpoint.error().detail);
        node_ = std::make_unique<NodeClient>(ioc_.get_executor(), *endpoint, 5s, 1);
        const auto until = std::chrono::steady_clock::now() + 10s;
        while (!node_->any_ready()) {
            if (std::chrono::steady_clock::now() >= until) throw std::runtime_error("no connection to " + redis.url());
            ioc_.run_one_until(until);
        }
    }
    ~NodeOnOneThread() {
        node_->stop();
        work_.reset();
        ioc_.poll();
    }
    NodeOnOneThread(const NodeOnOneThread&) = delete;
    NodeOnOneThread& operator=(const NodeOnOneThread&) = delete;

    /// EVALSHA of `script` with `args` (EVAL after NOSCRIPT), awaited here.
    result<Value> eval(const store::redis::Script& script, const ScriptArgs& args) {
        std::optional<result<Value>> reply;
        net::co_spawn(
            ioc_,
            [&]() -> net::awaitable<void> {
                reply.emplace(co_await node_->eval(script, args, NodeClient::clock::now() + 5s));
            },
            net::detached);
        const auto until = std::chrono::steady_clock::now() + 10s;
        while (!reply && std::chrono::steady_clock::now() < until) ioc_.run_one_until(until);
        if (!reply) throw std::runtime_error("redis did not answer");
        return std::move(*reply);
    }

private:
    net::io_context ioc_{1};
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work_{ioc_.get_executor()};
    std::unique_ptr<NodeClient> node_;
};

/// A check as the algorithm's own script takes it alone, at the instant `now_ms` (ARGV[7]):
/// 1, key, limit, window_ms, burst, cost, member, mode '', now.
class LoneAt final : public ScriptArgs {
public:
    LoneAt(const CheckArgs& check, std::int64_t now_ms) : check_(check), now_ms_(now_ms) {}
    [[nodiscard]] std::size_t count() const override { return 9; }
    void append_to(std::string& out) const override {
        using store::redis::append_bulk;
        append_bulk(out, std::string_view("1"));
        append_bulk(out, check_.key);
        append_bulk(out, check_.limit);
        append_bulk(out, check_.window_ms);
        append_bulk(out, check_.burst);
        append_bulk(out, static_cast<std::int64_t>(check_.cost));
        append_bulk(out, check_.member);
        append_bulk(out, std::string_view());
        append_bulk(out, now_ms_);
    }

private:
    const CheckArgs& check_;
    std::int64_t now_ms_;
};

CheckArgs check(Algorithm a, std::int64_t limit, std::int64_t window_ms, std::int64_t burst, std::string key,
                std::string member = {}) {
    return CheckArgs{a, limit, window_ms, burst, 1, std::move(key), std::move(member)};
}

std::vector<std::int64_t> numbers_of(const result<Value>& reply) {
    // (a failure, a non-array, a non-integer: numbers no reply has)
    std::vector<std::int64_t> out;
    if (!reply) return {-1000, static_cast<std::int64_t>(reply.error().code)};
    // An array read flat (FlatReply::element's): its members that are no integer kept apart.
    if (reply->type == Value::Type::integers) {
        out.assign(reply->integers.begin(), reply->integers.end());
        for (const auto& e : reply->elements) out.at(static_cast<std::size_t>(e.integer)) = -3000;
        return out;
    }
    if (reply->type != Value::Type::array) return {-2000};
    for (const auto& e : reply->elements) out.push_back(e.type == Value::Type::integer ? e.integer : -3000);
    return out;
}

class FlatBatch : public ::testing::Test {
protected:
    static void TearDownTestSuite() {
        delete redis_;
        redis_ = nullptr;
    }
    void SetUp() override {
        if (redis_ == nullptr) redis_ = new RedisServer();
        ASSERT_EQ(redis_->command({"FLUSHALL"}), "OK");
    }

    /// The checks of one round, their keys under `prefix`: every algorithm, two policies of
    /// one algorithm that differ in a number only, and several checks of one policy (on one
    /// key and on two), interleaved. `round` keeps members and lease ids apart.
    static std::vector<CheckArgs> round_of(const std::string& prefix, int round) {
        const std::string r = std::to_string(round);
        std::vector<CheckArgs> out;
        for (int i = 0; i < 4; ++i) {
            const std::string n = std::to_string(i);
            out.push_back(check(Algorithm::token_bucket, 3, 600'000, 3, prefix + "tb"));
            out.push_back(check(Algorithm::token_bucket, 3, 60'000, 3, prefix + "tb-short"));
            out.push_back(check(Algorithm::sliding_log, 2, 600'000, 2, prefix + "log", "m:" + r + ":" + n));
            out.push_back(check(Algorithm::gcra, 4, 600'000, 2, prefix + "gcra"));
            // A calendar's reset is its period's end: a plain fixed window's follows the
            // counter's PTTL, which Redis reads from its own clock, not ARGV[7] (the lone calls
            // run later than the batch); RedisStoreFlatBatch compares those.
            out.push_back(check(Algorithm::fixed_window, 3, 600'000, 3, prefix + (i % 2 == 0 ? "fw-a" : "fw-b"),
                                "cal:1d:0"));
            out.push_back(check(Algorithm::sliding_window, 5, 600'000, 5, prefix + "sw"));
            out.push_back(check(Algorithm::concurrency, 2, 600'000, 2, prefix + "leases", "lease:" + r + ":" + n));
            out.push_back(check(Algorithm::erl_fixed_window, 2, 600'000, 2, prefix + "erl", "600"));
            // The whole burst at once, then one more: denied with a token back in 500 ms
            // (Retry-After's floor of 1 s). Long-lived state: Redis expires keys on its own
            // clock, and the lone calls run later than the batch.
            out.push_back(check(Algorithm::token_bucket, 1'200, 600'000, 1'200, prefix + "spent"));
            out.back().cost = i % 2 == 0 ? 1'200 : 1;
        }
        return out;
    }

    static RedisServer* redis_;
};
RedisServer* FlatBatch::redis_ = nullptr;

TEST_F(FlatBatch, EveryCheckOfAMixedBatchIsAnsweredAsItsScriptAnswersItAlone) {
    NodeOnOneThread node(*redis_);
    int denied = 0;
    for (int round = 0; round < 3; ++round) {  // later rounds meet the state earlier ones left
        const std::vector<CheckArgs> batched = round_of("{b}:", round);
        const std::vector<CheckArgs> alone = round_of("{a}:", round);
        const store::redis::BatchChecks<std::vector<CheckArgs>> call(batched);
        const auto reply = node.eval(store::redis::batch_script(), call);
        ASSERT_TRUE(reply) << reply.error().detail;
        // Read flat by the connection: the time, then three integers per check; nothing
        // crossed, nothing failed, nothing more.
        ASSERT_EQ(reply->type, Value::Type::integers) << reply->str;
        ASSERT_EQ(reply->integers.size(), 1 + store::redis::reply_per_check * batched.size());
        EXPECT_TRUE(reply->elements.empty());
        const std::int64_t now_ms = reply->integers[0];

        const store::redis::FlatReply flat(reply, batched.size());
        for (std::size_t i = 0; i < batched.size(); ++i) {
            const auto& c = alone[i];
            const auto own = node.eval(store::redis::script_for(c.algorithm), LoneAt(c, now_ms));
            const auto rebuilt = flat.element(i, batched[i].limit);
            EXPECT_EQ(numbers_of(rebuilt), numbers_of(own))
                << "round " << round << ", check " << i << " (" << policy::to_string(c.algorithm) << " on " << c.key
                << ")";
            if (rebuilt && rebuilt->integers.at(0) == 0) ++denied;
        }
    }
    // Every policy runs out within the rounds, so denials (Retry-After) are compared too.
    EXPECT_GE(denied, 40);
}

// One Redis error (WRONGTYPE: envoyproxy/ratelimit's counter is no hash) fails its check
// alone; the checks around it are decided and charged.
TEST_F(FlatBatch, ACheckThatFailsInRedisFailsAloneAndTheOthersAreCharged) {
    NodeOnOneThread node(*redis_);
    ASSERT_EQ(redis_->command({"HSET", "bad", "not", "a counter"}), "1");
    const std::vector<CheckArgs> checks{check(Algorithm::fixed_window, 5, 600'000, 5, "good-a"),
                                        check(Algorithm::erl_fixed_window, 5, 600'000, 5, "bad", "600"),
                                        check(Algorithm::fixed_window, 5, 600'000, 5, "good-b")};
    const store::redis::BatchChecks<std::vector<CheckArgs>> call(checks);
    const auto reply = node.eval(store::redis::batch_script(), call);
    const store::redis::FlatReply flat(reply, checks.size());

    const auto failed = flat.element(1, 5);
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().code, errc::bad_script_reply);
    EXPECT_NE(failed.error().detail.find("WRONGTYPE"), std::string::npos) << failed.error().detail;
    for (std::size_t i : {0u, 2u}) {
        const auto ok = flat.element(i, 5);
        ASSERT_TRUE(ok) << ok.error().detail;
        EXPECT_EQ(ok->integers.at(0), 1);
        EXPECT_EQ(ok->integers.at(2), 4);
    }
    EXPECT_EQ(redis_->command({"GET", "good-a"}), "1");
    EXPECT_EQ(redis_->command({"GET", "good-b"}), "1");
}

// A malformed argument group anywhere fails the whole call before any check runs, and says
// which group and what.
TEST_F(FlatBatch, AMalformedBatchChargesNothingAndNamesWhatIsWrong) {
    const std::string script(store::redis::batch_script().text);
    auto eval = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), {"EVAL", script});
        return redis_->command(argv);
    };
    const std::vector<std::string> keys{"2", "m:a", "m:b"};
    auto with = [&](std::vector<std::string> rest) {
        std::vector<std::string> argv = keys;
        argv.insert(argv.end(), rest.begin(), rest.end());
        return eval(argv);
    };
    const std::vector<std::string> policy{"1", "fixed_window", "5", "600000", "5"};
    auto policy_then = [&](std::vector<std::string> checks) {
        std::vector<std::string> argv = policy;
        argv.insert(argv.end(), checks.begin(), checks.end());
        return with(argv);
    };

    EXPECT_NE(policy_then({"1", "1", "", "", "1", "1", "", ""}).find("(error)"), 0u)
        << "the well-formed batch these are made from";
    ASSERT_EQ(redis_->command({"FLUSHALL"}), "OK");

    EXPECT_EQ(policy_then({"1", "1", "", "", "9", "1", "", ""}), "(error) batch: check 2: no policy 9 (1..1)");
    EXPECT_EQ(policy_then({"1", "1", "", "", "1", "x", "", ""}), "(error) batch: check 2: cost must be a number");
    EXPECT_EQ(policy_then({"1", "1", "", ""}),
              "(error) batch: expected 1 + 4 arguments per policy + 4 per key, then pairs");
    EXPECT_EQ(with({"1", "fixed_window", "five", "600000", "5", "1", "1", "", "", "1", "1", "", ""}),
              "(error) batch: policy 1: limit, window_ms and burst must be numbers");
    EXPECT_EQ(with({"2", "fixed_window", "5", "600000", "5", "leaky", "5", "1000", "5", "1", "1", "", "", "2", "1",
                    "", ""}),
              "(error) batch: policy 2: unknown algorithm leaky");
    EXPECT_EQ(with({"0", "1", "1", "", "", "1", "1", "", ""}),
              "(error) batch: ARGV[1] must be the number of policies (1 or more), not 0");
    EXPECT_TRUE(redis_->keys().empty()) << "a malformed batch charged something";
}

}  // namespace
}  // namespace ratelimitd::test::flat_batch_test
