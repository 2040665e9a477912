// Reports against the binary and a real redis-server: the state a report leaves is bounded
// (a sliding log holds a few weighted entries, not one member per unit), its debt is bounded
// by max_debt (Retry-After and every key's PTTL within (1 + max_debt / limit) windows), and no
// request any endpoint accepts makes one script call cost Redis more than a small constant.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"
#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ratelimitd::test::report_debt_test {
namespace {

// What the requests since the last CONFIG RESETSTAT cost Redis: the script calls, and the
// commands those scripts ran (Redis counts each under its own name in INFO commandstats).
// Not counted: the test's own INFO and CONFIG, and a connection's setup and health commands.
struct RedisWork {
    long long script_calls = 0;
    long long commands = 0;
};

RedisWork work_since_reset(const RedisServer& redis) {
    // The test's own INFO and CONFIG, and the connections' own commands (setup, health pings,
    // the reset channel's subscription): none of them is a call's work on keys.
    static const std::set<std::string> not_a_calls_work = {"info",      "config",     "ping",        "script",
                                                           "auth",      "select",     "client",      "hello",
                                                           "subscribe", "psubscribe", "unsubscribe", "command",
                                                           "role",      "time",       "cluster"};
    RedisWork work;
    std::istringstream lines(redis.command({"INFO", "commandstats"}));
    const std::string prefix = "cmdstat_", calls = ":calls=";
    for (std::string line; std::getline(lines, line);) {
        const auto at = line.find(calls);
        if (line.rfind(prefix, 0) != 0 || at == std::string::npos) continue;
        const std::string name = line.substr(prefix.size(), at - prefix.size());
        const long long n = std::stoll(line.substr(at + calls.size()));
        if (name == "evalsha" || name == "eval") {
            work.script_calls += n;
        } else if (name.find('|') == std::string::npos && !not_a_calls_work.contains(name)) {
            work.commands += n;
        }
    }
    return work;
}

// The most Redis commands one script call may run per window of its policy: reading the time,
// the state, trimming, writing and expiring it. Measured: 3-5 for the counters, 15 for a
// sliding log, 177 for a sliding log of 8 windows in debt; a call that walked its entries or
// looped over its cost would run thousands.
constexpr long long most_commands_per_window = 24;

std::string report_body(const std::string& policy, const std::string& tenant, long long cost) {
    return R"({"policy":")" + policy + R"(","tenant":")" + tenant + R"(","cost":)" + std::to_string(cost) + "}";
}

std::string check_body(const std::string& policy, const std::string& tenant, long long cost = 1) {
    return R"({"policy":")" + policy + R"(","tenant":")" + tenant + R"(","cost":)" + std::to_string(cost) + "}";
}

// The size of a key in what its type holds: members of a sorted set, fields of a hash, bytes
// of a string.
long long size_of(const RedisServer& redis, const std::string& key) {
    const std::string type = redis.command({"TYPE", key});
    if (type == "zset") return redis.integer({"ZCARD", key});
    if (type == "hash") return redis.integer({"HLEN", key});
    if (type == "string") return redis.integer({"STRLEN", key});
    ADD_FAILURE() << key << " has type " << type;
    return 0;
}

// ---- issue 31, high item 2: a sliding log report grows without bound --------------------------

const char* const log_config = R"(
policies:
  log:
    algorithm: sliding_log
    limit: 10000
    window: 1h
)";

TEST(ReportDebt, HundredReportsOfTheLimitLeaveASlidingLogOfAFewEntriesAndChecksStayCheap) {
    RedisServer redis;
    Ratelimitd server(log_config, redis.url(), {"--store-timeout", "10s"});
    HttpClient c(server.port());
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(c.post("/v1/report", report_body("log", "acme", 10'000)).status, 200) << "report " << i;
    }
    const std::vector<std::string> keys = redis.keys();
    ASSERT_EQ(keys.size(), 1u);
    // One entry of the limit, one debt entry (max_debt: the limit) that the other 98 joined.
    EXPECT_LE(redis.integer({"ZCARD", keys[0]}), 3) << "members on " << keys[0];

    ASSERT_EQ(redis.command({"CONFIG", "RESETSTAT"}), "OK");
    for (int i = 0; i < 50; ++i) {
        // Cost 2: a denial of more than one unit is never answered from the denial cache, so
        // every check is a script call.
        const HttpResponse r = c.post("/v1/check", check_body("log", "acme", 2));
        ASSERT_EQ(r.status, 429) << "check " << i << ": in debt until the entries leave the window";
        ASSERT_TRUE(r.header("x-ratelimit-degraded").empty()) << r.header("x-ratelimit-degraded");
    }
    // The checks find the reset by rank, never walking the log (before: 17-56 ms per check):
    // counted in the commands their scripts run, which no load on the machine changes.
    const RedisWork work = work_since_reset(redis);
    EXPECT_EQ(work.script_calls, 50);
    EXPECT_LE(work.commands, 50 * most_commands_per_window) << redis.command({"INFO", "commandstats"});

    // A report of the largest cost the endpoint takes is charged up to the bound, not refused.
    ASSERT_EQ(c.post("/v1/report", report_body("log", "acme", 1'000'000)).status, 200);
    EXPECT_LE(redis.integer({"ZCARD", keys[0]}), 3);
}

// ---- the worst input of each endpoint --------------------------------------------------------

// Every algorithm at its largest numbers, and a sliding log of the most windows a policy has.
const char* const worst_config = R"(
policies:
  log:
    algorithm: sliding_log
    limit: 100000
    window: 1h
  log-layered:
    algorithm: sliding_log
    windows:
      - { limit: 100000, window: 1m }
      - { limit: 100000, window: 2m }
      - { limit: 100000, window: 3m }
      - { limit: 100000, window: 4m }
      - { limit: 100000, window: 5m }
      - { limit: 100000, window: 6m }
      - { limit: 100000, window: 7m }
      - { limit: 100000, window: 8m }
  tb:
    algorithm: token_bucket
    limit: 1000000000
    window: 1h
  gcra:
    algorithm: gcra
    limit: 1000000000
    window: 1h
  fw:
    algorithm: fixed_window
    limit: 1000000000
    window: 1h
  sw:
    algorithm: sliding_window
    limit: 1000000000
    window: 1h
)";

TEST(ReportDebt, TheWorstInputOfEveryEndpointLeavesSmallKeysAndCheapCalls) {
    RedisServer redis;
    Ratelimitd server(worst_config, redis.url(), {"--store-timeout", "10s"});
    HttpClient c(server.port());
    // A call's cost is the work its script does, counted in Redis commands, not in
    // microseconds (those measure the machine: a loaded one made a cheap call look slow).
    // Each request is measured alone: the most any script call of it may run is a few
    // commands per window of the policy (a sliding log of 8 windows reads each of them).
    const auto post = [&](const std::string& policy, const std::string& target, const std::string& body) {
        EXPECT_EQ(redis.command({"CONFIG", "RESETSTAT"}), "OK");
        const int status = c.post(target, body).status;
        const RedisWork work = work_since_reset(redis);
        const long long windows = policy == "log-layered" ? 8 : 1;
        EXPECT_EQ(work.script_calls, 1) << policy << " " << target << " " << body;
        EXPECT_LE(work.commands, most_commands_per_window * windows)
            << policy << " " << target << " " << body << ": " << redis.command({"INFO", "commandstats"});
        return status;
    };
    for (const std::string policy : {"log", "log-layered", "tb", "gcra", "fw", "sw"}) {
        // The largest cost a check may ask (the policy's max_cost, at most 1000000), on fresh
        // tenants, then the largest report, three times, then the largest check again (the
        // sliding logs are in debt then; the others' limits hold it all).
        const long long most = policy.rfind("log", 0) == 0 ? 100'000 : 1'000'000;
        for (int tenant = 0; tenant < 3; ++tenant) {
            std::string t = "t";
            t += std::to_string(tenant);
            EXPECT_EQ(post(policy, "/v1/check", check_body(policy, t, most)), 200) << policy;
            for (int i = 0; i < 3; ++i) {
                EXPECT_EQ(post(policy, "/v1/report", report_body(policy, t, 1'000'000)), 200) << policy;
            }
            const int again = post(policy, "/v1/check", check_body(policy, t, most));
            EXPECT_TRUE(again == 200 || again == 429) << policy << ": " << again;
        }
    }
    for (const std::string& key : redis.keys()) {
        // A sliding log: one entry per admitted check or report that fit, one debt entry; a
        // bucket or sliding window: a hash of 4 fields; GCRA, fixed window: a short string.
        EXPECT_LE(size_of(redis, key), key.find(":log") != std::string::npos ? 3 : 64) << key;
    }
}

// ---- issue 31, medium item 3: debt has a bound -----------------------------------------------

struct DebtCase {
    const char* policy;
    const char* algorithm;
    long long max_debt;  ///< -1: the default (the limit, 5)
};

// One policy of 5 per minute, with its max_debt when the case sets one.
std::string debt_config(const DebtCase& c) {
    std::string text = std::string("policies:\n  ") + c.policy + ":\n    algorithm: " + c.algorithm +
                       "\n    limit: 5\n    window: 1m\n";
    if (c.max_debt >= 0) text += "    max_debt: " + std::to_string(c.max_debt) + "\n";
    return text;
}

class DebtBound : public ::testing::TestWithParam<std::tuple<DebtCase, bool>> {};

TEST_P(DebtBound, AHugeReportLocksOutForAtMostOnePlusMaxDebtOverLimitWindows) {
    const auto [the_case, on_redis] = GetParam();
    std::optional<RedisServer> redis;
    if (on_redis) redis.emplace();
    Ratelimitd server(debt_config(the_case), on_redis ? redis->url() : "", {"--store-timeout", "10s"});
    HttpClient c(server.port());
    // (1 + max_debt / limit) windows of 60 s; a sliding window counter's key lives two windows
    // whatever its debt (docs/configuration.md).
    const long long max_debt = the_case.max_debt >= 0 ? the_case.max_debt : 5;
    long long bound_ms = (5 + max_debt) * 60'000 / 5;
    if (std::string(the_case.algorithm) == "sliding_window") bound_ms = std::max(bound_ms, 120'000LL);
    for (int i = 0; i < 10; ++i) {
        ASSERT_EQ(c.post("/v1/report", report_body(the_case.policy, "acme", 1'000'000)).status, 200);
    }
    const HttpResponse denied = c.post("/v1/check", check_body(the_case.policy, "acme"));
    ASSERT_EQ(denied.status, 429);
    const long long retry_after = std::stoll(denied.header("retry-after"));
    EXPECT_GE(retry_after, 1);
    EXPECT_LE(retry_after * 1000, bound_ms + 999) << the_case.policy << ": Retry-After " << retry_after;
    if (!on_redis) return;
    const std::vector<std::string> keys = redis->keys();
    ASSERT_FALSE(keys.empty());
    for (const std::string& key : keys) {
        const long long pttl = redis->integer({"PTTL", key});
        EXPECT_GT(pttl, 0) << key;
        EXPECT_LE(pttl, bound_ms) << key;
    }
}

// ---- issue 38: a debt bound's webhook (notify.policies.NAME.debt) --------------------------

TEST(ReportDebt, ADebtBoundCostsTheReportThatPassesItOneRedisCommandAndTheOthersNone) {
    RedisServer redis;
    WebhookReceiver receiver;
    const std::string numbers = "limit: 10, window: 1h, max_debt: 100}\n";
    std::string config = "policies:\n";
    for (const char* algorithm : {"token_bucket", "gcra", "fixed_window", "sliding_window", "sliding_log"}) {
        config += std::string("  ") + algorithm + ": {algorithm: " + algorithm + ", " + numbers;
        config += std::string("  ") + algorithm + "-watched: {algorithm: " + algorithm + ", " + numbers;
    }
    config += "notify:\n  targets:\n    ops: {url: \"" + receiver.url() +
              "\", secret: \"report-debt-test-secret-0123\"}\n  policies:\n";
    for (const char* algorithm : {"token_bucket", "gcra", "fixed_window", "sliding_window", "sliding_log"}) {
        config += std::string("    ") + algorithm + "-watched: {debt: 40, target: ops}\n";
    }
    Ratelimitd server(config, redis.url());
    HttpClient c(server.port());
    for (const std::string algorithm : {"token_bucket", "gcra", "fixed_window", "sliding_window", "sliding_log"}) {
        // The same 20 reports of 9 units on a policy without the bound and on one with it: the
        // debt passes 40 once (at the 6th report), and every report after it is past it already.
        long long spent[2] = {0, 0};
        for (int watched = 0; watched < 2; ++watched) {
            const std::string policy = watched ? algorithm + "-watched" : algorithm;
            ASSERT_EQ(redis.command({"CONFIG", "RESETSTAT"}), "OK");
            for (int i = 0; i < 20; ++i) ASSERT_EQ(c.post("/v1/report", report_body(policy, "acme", 9)).status, 200);
            const auto work = work_since_reset(redis);
            spent[watched] = work.script_calls + work.commands;
        }
        EXPECT_GT(spent[0], 20) << algorithm << ": every report's EVALSHA and its script's commands";
        EXPECT_EQ(spent[1] - spent[0], 1) << algorithm << ": one SET NX claims the bound";
    }
    EXPECT_TRUE(wait_until([&] { return receiver.count() >= 5; }, std::chrono::seconds(20)));
    EXPECT_EQ(receiver.count(), 5u) << "one event per watched policy";
}

INSTANTIATE_TEST_SUITE_P(Policies, DebtBound,
                         ::testing::Combine(::testing::Values(DebtCase{"tb", "token_bucket", -1},
                                                              DebtCase{"gcra", "gcra", -1},
                                                              DebtCase{"fw", "fixed_window", -1},
                                                              DebtCase{"sw", "sliding_window", -1},
                                                              DebtCase{"log", "sliding_log", -1},
                                                              DebtCase{"tb-deep", "token_bucket", 20},
                                                              DebtCase{"gcra-deep", "gcra", 20},
                                                              DebtCase{"sw-none", "sliding_window", 0}),
                                            ::testing::Bool()),
                         [](const auto& info) {
                             std::string name = std::get<0>(info.param).policy;
                             for (char& ch : name) {
                                 if (ch == '-') ch = '_';
                             }
                             return name + (std::get<1>(info.param) ? "_redis" : "_embedded");
                         });

}  // namespace
}  // namespace ratelimitd::test::report_debt_test
