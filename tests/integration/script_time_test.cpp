// Every limit of one script call is decided at one instant: lua/multi.lua and lua/batch.lua
// read Redis TIME once per call (counted by Redis itself), never once per limit or check.
#include "support/http_client.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace ratelimitd::test::script_time_test {
namespace {

long long calls_of(const RedisServer& redis, const std::string& command) {
    const std::string info = redis.command({"INFO", "commandstats"});
    const std::string field = "cmdstat_" + command + ":calls=";
    const auto at = info.find(field);
    return at == std::string::npos ? 0 : std::stoll(info.substr(at + field.size()));
}

const char* const config = R"(
policies:
  tiered:
    algorithm: sliding_window
    windows:
      - { limit: 1000, window: 1m }
      - { limit: 5000, window: 1h }
      - { limit: 9000, window: 1d }
  single:
    algorithm: token_bucket
    limit: 100000
    window: 600s
)";

TEST(ScriptTime, AMultiWindowCheckReadsTimeOnce) {
    RedisServer redis;
    Ratelimitd server(config, redis.url(), {"--store-timeout", "2s"});
    HttpClient c(server.port());
    ASSERT_EQ(redis.command({"CONFIG", "RESETSTAT"}), "OK");
    for (int i = 0; i < 5; ++i) ASSERT_EQ(c.post("/v1/check", R"({"policy":"tiered","tenant":"t"})").status, 200);
    EXPECT_EQ(calls_of(redis, "evalsha"), 5);
    EXPECT_EQ(calls_of(redis, "time"), 5) << "one TIME per call, not one per window and phase";
}

TEST(ScriptTime, ACoalescedBatchReadsTimeOnce) {
    RedisServer redis;
    Ratelimitd server(config, redis.url(), {"--threads", "1", "--store-timeout", "2s"});
    ASSERT_EQ(redis.command({"CONFIG", "RESETSTAT"}), "OK");
    std::atomic<int> next{0};
    std::vector<std::thread> clients;
    for (int n = 0; n < 16; ++n) {
        clients.emplace_back([&] {
            HttpClient client(server.port());
            while (next.fetch_add(1) < 400) client.post("/v1/check", R"({"policy":"single","tenant":"t"})");
        });
    }
    for (auto& t : clients) t.join();
    const long long calls = calls_of(redis, "evalsha");
    ASSERT_LT(calls, 400) << "some checks left in batches";
    EXPECT_EQ(calls_of(redis, "time"), calls) << "one TIME per call, not one per check";
}

}  // namespace
}  // namespace ratelimitd::test::script_time_test
