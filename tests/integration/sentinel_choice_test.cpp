// Which primary ratelimitd believes when its sentinels disagree or are wrong: the address
// most reachable sentinels name, and only once that Redis says ROLE master.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/sentinel.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::test::sentinel_choice_test {
namespace {

using namespace std::chrono_literals;

const char* const config = "policies:\n  fw:\n    algorithm: fixed_window\n    limit: 100\n    window: 60s\n";

long long script_calls(const RedisServer& redis) {
    const std::string info = redis.command({"INFO", "commandstats"});
    long long total = 0;
    for (const std::string cmd : {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="}) {
        if (auto at = info.find(cmd); at != std::string::npos) total += std::stoll(info.substr(at + cmd.size()));
    }
    return total;
}

TEST(SentinelChoice, TheAddressMostSentinelsNameWinsOverTheFirstListed) {
    RedisServer stale;    // what one sentinel (listed first) calls the primary
    RedisServer primary;  // what the two others call it
    RedisSentinel lone("m", stale.port());
    RedisSentinel second("m", primary.port());
    RedisSentinel third("m", primary.port());
    const std::string url = "redis-sentinel://127.0.0.1:" + std::to_string(lone.port()) + ",127.0.0.1:" +
                            std::to_string(second.port()) + ",127.0.0.1:" + std::to_string(third.port()) + "/m";
    Ratelimitd server(config, url, {"--store-timeout", "2s"});
    HttpClient c(server.port());
    for (int i = 0; i < 5; ++i) {
        auto r = c.post("/v1/check", R"({"policy":"fw","tenant":"t"})");
        ASSERT_EQ(r.status, 200);
        EXPECT_TRUE(r.header("x-ratelimit-degraded").empty()) << r.body;
    }
    EXPECT_EQ(primary.command({"GET", "rl:fw:t:global"}), "5");
    EXPECT_EQ(stale.command({"EXISTS", "rl:fw:t:global"}), "0");
}

TEST(SentinelChoice, AnAddressThatIsNoPrimaryIsNeverUsed) {
    RedisServer primary;
    RedisServer replica("", {"--replicaof", "127.0.0.1", std::to_string(primary.port())});
    RedisSentinel wrong("m", replica.port());  // a sentinel whose "primary" is a replica
    Ratelimitd server(config, wrong.url(), {"--store-timeout", "2s"});
    HttpClient c(server.port());
    for (int i = 0; i < 5; ++i) {
        auto r = c.post("/v1/check", R"({"policy":"fw","tenant":"t"})");
        EXPECT_EQ(r.status, 200);
        EXPECT_FALSE(r.header("x-ratelimit-degraded").empty()) << "no primary: on_store_error decides";
    }
    EXPECT_FALSE(server.process().wait_for_log("ROLE says slave", process_start_bound).empty())
        << server.process().log();
    EXPECT_EQ(script_calls(replica), 0) << "no check was sent to the replica";
}

}  // namespace
}  // namespace ratelimitd::test::sentinel_choice_test
