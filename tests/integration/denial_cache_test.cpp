// The local denial cache, per algorithm, against a real Redis: once a key is denied, further
// checks are denied without a round trip, with correct headers, exactly until Retry-After;
// an admin reset clears it.
#include "support/held_window.hpp"
#include "support/http_client.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

namespace ratelimitd::test::denial_cache_test {
namespace {

using json = nlohmann::json;

const std::string admin_token = "denial-cache-admin-token";

const char* const config = R"(
policies:
  tb:
    algorithm: token_bucket
    limit: 3
    window: 6s
  sl:
    algorithm: sliding_log
    limit: 3
    window: 4s
  fw:
    algorithm: fixed_window
    limit: 3
    window: 4s
  gc:
    algorithm: gcra
    limit: 3
    window: 6s
  sw:
    algorithm: sliding_window
    limit: 3
    window: 4s
)";

// The soonest any policy above gives a unit back after its first check: a token bucket's or
// GCRA's 6 s / 3 (the windows of the others are 4 s).
constexpr std::chrono::seconds first_refill{2};

/// Script calls Redis has run so far (EVALSHA + EVAL), from INFO commandstats.
long long script_calls(const RedisServer& redis) {
    const std::string info = redis.command({"INFO", "commandstats"});
    long long total = 0;
    for (const char* cmd : {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="}) {
        if (auto at = info.find(cmd); at != std::string::npos) total += std::stoll(info.substr(at + std::strlen(cmd)));
    }
    return total;
}

class DenialCache : public ::testing::TestWithParam<const char*> {
protected:
    static void SetUpTestSuite() {
        redis_ = new RedisServer();
        server_ = new Ratelimitd(config, redis_->url(), {}, {"RATELIMITD_ADMIN_TOKEN=" + admin_token});
    }
    static void TearDownTestSuite() {
        delete server_;
        delete redis_;
    }
    static RedisServer* redis_;
    static Ratelimitd* server_;
};
RedisServer* DenialCache::redis_ = nullptr;
Ratelimitd* DenialCache::server_ = nullptr;

TEST_P(DenialCache, RepeatedDenialsSkipRedisUntilRetryAfterThenRedisDecides) {
    const std::string policy = GetParam();
    HttpClient c(server_->port());
    std::string body;
    HttpResponse first;
    long long calls_before = 0;
    // Twenty cached denials, all before any policy here gives a unit back; on a machine too
    // loaded for that, a new tenant again (Redis rightly admits once the refill came).
    within(first_refill, [&](int n) {
        const std::string tenant = "flooder-" + std::to_string(n);
        body = json{{"policy", policy}, {"tenant", tenant}}.dump();
        for (int i = 0; i < 3; ++i) ASSERT_EQ(c.post("/v1/check", body).status, 200);
        first = c.post("/v1/check", body);
        ASSERT_EQ(first.status, 429);
        calls_before = script_calls(*redis_);
        for (int i = 0; i < 10; ++i) {
            auto res = c.post("/v1/check", body);
            ASSERT_EQ(res.status, 429);
            EXPECT_EQ(res.header("x-ratelimit-remaining"), "0");
            EXPECT_EQ(res.header("x-ratelimit-limit"), "3");
            EXPECT_EQ(res.header("x-ratelimit-reset"), first.header("x-ratelimit-reset"));
            const int retry = std::stoi(res.header("retry-after"));
            EXPECT_GE(retry, 1);
            EXPECT_LE(retry, std::stoi(first.header("retry-after")));
            EXPECT_EQ(res.header("ratelimit"), "\"" + policy + "\";r=0;t=" + std::to_string(retry));
            // A larger cost is denied as well while not even one unit is left.
            EXPECT_EQ(c.post("/v1/check", json{{"policy", policy}, {"tenant", tenant}, {"cost", 2}}.dump()).status, 429);
        }
        EXPECT_EQ(script_calls(*redis_), calls_before) << "denials came from the local cache";
    });
    if (HasFailure()) return;

    // Exactly at Retry-After the cache has run out and Redis admits again.
    std::this_thread::sleep_for(std::chrono::seconds(std::stoi(first.header("retry-after"))));
    EXPECT_EQ(c.post("/v1/check", body).status, 200);
    EXPECT_GT(script_calls(*redis_), calls_before);
}

TEST_P(DenialCache, AnAdminResetClearsTheCachedDenial) {
    const std::string policy = GetParam();
    HttpClient c(server_->port());
    within(first_refill, [&](int n) {  // both denials before a refill could admit
        const std::string body = json{{"policy", policy}, {"tenant", "support-case-" + std::to_string(n)}}.dump();
        for (int i = 0; i < 3; ++i) ASSERT_EQ(c.post("/v1/check", body).status, 200);
        ASSERT_EQ(c.post("/v1/check", body).status, 429);
        ASSERT_EQ(c.post("/v1/check", body).status, 429);
        auto reset = c.post("/v1/reset", body, {{"Authorization", "Bearer " + admin_token}});
        ASSERT_EQ(reset.status, 200) << reset.body;
        EXPECT_EQ(c.post("/v1/check", body).status, 200);
    });
}

TEST_P(DenialCache, ASmallerCostThanTheOneDeniedStillAsksRedis) {
    const std::string policy = GetParam();
    HttpClient c(server_->port());
    within(first_refill, [&](int n) {  // the denial before a refill could admit
        const auto with_cost = [&](int cost) {
            return c.post("/v1/check", json{{"policy", policy}, {"tenant", "partial-" + std::to_string(n)}, {"cost", cost}}
                                           .dump())
                .status;
        };
        ASSERT_EQ(with_cost(2), 200);
        EXPECT_EQ(with_cost(2), 429) << "one unit left, two asked";
        EXPECT_EQ(with_cost(1), 200) << "the denial of cost 2 was not cached: one unit was still there";
    });
}

INSTANTIATE_TEST_SUITE_P(Algorithms, DenialCache, ::testing::Values("tb", "sl", "fw", "gc", "sw"));

}  // namespace
}  // namespace ratelimitd::test::denial_cache_test
