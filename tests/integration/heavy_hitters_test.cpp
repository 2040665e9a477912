// GET /v1/top against the real binary on a real Redis: concurrent checks of known tenants on
// two server threads, and the merged top lists name them with their exact counts.
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ratelimitd::test::heavy_hitters_test {
namespace {

const std::string admin_token = "heavy-hitters-admin-token-0123";
const std::map<std::string, std::string> as_admin = {{"Authorization", "Bearer " + admin_token}};

const char* const config = R"(
policies:
  login:
    algorithm: fixed_window
    limit: 3
    window: 300s
  quiet:
    algorithm: fixed_window
    limit: 100
    window: 60s
)";

class HeavyHitters : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        redis_ = new RedisServer();
        server_ = new Ratelimitd(config, redis_->url(), {"--threads", "2"}, {"RATELIMITD_ADMIN_TOKEN=" + admin_token});
        // 13 checks of .7 (10 denied), 7 of .8 at 2 units each (6 denied: only one fits in 3),
        // 2 of .9 (none), all at once over 8 connections spread over both threads.
        std::atomic<int> next{0};
        auto tally = fire(server_->port(), 22, 8, [&next](HttpClient& c) {
            const int i = next.fetch_add(1);
            const char* body = i < 13   ? R"({"policy":"login","tenant":"ip:192.0.2.7"})"
                               : i < 20 ? R"({"policy":"login","tenant":"ip:192.0.2.8","cost":2})"
                                        : R"({"policy":"login","tenant":"ip:192.0.2.9"})";
            return c.post("/v1/check", body);
        });
        ASSERT_EQ(tally.allowed, 3 + 1 + 2);
        ASSERT_EQ(tally.denied, 10 + 6);
    }
    static void TearDownTestSuite() {
        delete server_;
        delete redis_;
    }
    static HttpResponse top(const std::string& query) {
        HttpClient c(server_->port());
        return c.get("/v1/top" + query, as_admin);
    }
    static RedisServer* redis_;
    static Ratelimitd* server_;
};
RedisServer* HeavyHitters::redis_ = nullptr;
Ratelimitd* HeavyHitters::server_ = nullptr;

TEST_F(HeavyHitters, DeniedTopNamesTheTenantsWithExactCounts) {
    auto res = top("?policy=login&by=denied");
    ASSERT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(res.body, R"({"by":"denied","window_seconds":300,"k":20,"policies":[{"policy":"login","tenants":[)"
                        R"({"tenant":"ip:192.0.2.7","count":10,"error":0},)"
                        R"({"tenant":"ip:192.0.2.8","count":6,"error":0}]}]})");
    // Without a policy: every policy with entries (quiet has none).
    EXPECT_EQ(top("").body, res.body);
    EXPECT_EQ(top("?n=1").body, R"({"by":"denied","window_seconds":300,"k":20,"policies":[{"policy":"login",)"
                                R"("tenants":[{"tenant":"ip:192.0.2.7","count":10,"error":0}]}]})");
}

TEST_F(HeavyHitters, AdmittedTopCountsUnits) {
    auto res = top("?by=admitted&policy=login");
    ASSERT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(res.body, R"({"by":"admitted","window_seconds":300,"k":20,"policies":[{"policy":"login","tenants":[)"
                        R"({"tenant":"ip:192.0.2.7","count":3,"error":0},)"
                        R"({"tenant":"ip:192.0.2.8","count":2,"error":0},)"
                        R"({"tenant":"ip:192.0.2.9","count":2,"error":0}]}]})");
    EXPECT_EQ(top("?policy=quiet").body,
              R"({"by":"denied","window_seconds":300,"k":20,"policies":[{"policy":"quiet","tenants":[]}]})");
}

TEST_F(HeavyHitters, BadParametersAreRefusedNamingThem) {
    for (const auto& [query, named] : std::vector<std::pair<std::string, std::string>>{
             {"?by=allowed", "by:"}, {"?n=0", "n:"}, {"?n=21", "n:"}, {"?tenant=x", "query:"}}) {
        auto res = top(query);
        EXPECT_EQ(res.status, 400) << query;
        EXPECT_NE(res.body.find("\"invalid_request\""), std::string::npos) << res.body;
        EXPECT_NE(res.body.find("\"" + named), std::string::npos) << res.body;
    }
    auto unknown = top("?policy=nope");
    EXPECT_EQ(unknown.status, 400);
    EXPECT_NE(unknown.body.find("unknown_policy"), std::string::npos) << unknown.body;
    HttpClient c(server_->port());
    EXPECT_EQ(c.get("/v1/top").status, 401);  // admin: the token is required
}

TEST_F(HeavyHitters, MetricsCountUnitsCacheHitsAnswerTimesAndConnections) {
    HttpClient c(server_->port());
    const std::string m = c.get("/metrics").body;
    EXPECT_EQ(sample(m, R"(ratelimitd_cost_units_total{policy="login",verdict="allowed"})"), 3 + 2 + 2) << m;
    EXPECT_EQ(sample(m, R"(ratelimitd_cost_units_total{policy="login",verdict="denied"})"), 10 + 6 * 2) << m;
    // Only .7's cost-1 denials after its first may come from the denial cache.
    const double hits = sample(m, R"(ratelimitd_denial_cache_hits_total{policy="login"})");
    EXPECT_NE(hits, -1) << "the series is missing (it is exported from the first check on)\n" << m;
    EXPECT_LE(hits, 10 - 1);
    EXPECT_EQ(sample(m, R"(ratelimitd_http_request_duration_seconds_count{route="/v1/check"})"), 22) << m;
    EXPECT_EQ(sample(m, R"(ratelimitd_http_request_duration_seconds_bucket{route="/v1/check",le="+Inf"})"), 22);
    EXPECT_EQ(sample(m, R"(ratelimitd_redis_connections{state="connected"})"), 4) << m;  // 2 per thread
    EXPECT_EQ(sample(m, "ratelimitd_config_last_reload_success"), 1);
    EXPECT_GT(sample(m, "process_open_fds"), 0);
}

TEST(HeavyHittersOff, TopKZeroAnswers404) {
    Ratelimitd server(config, "", {"--top-k", "0"}, {"RATELIMITD_ADMIN_TOKEN=" + admin_token});
    HttpClient c(server.port());
    EXPECT_EQ(c.post("/v1/check", R"({"policy":"login","tenant":"a"})").status, 200);
    auto res = c.get("/v1/top", as_admin);
    EXPECT_EQ(res.status, 404);
    EXPECT_NE(res.body.find("top_k"), std::string::npos) << res.body;
}

}  // namespace
}  // namespace ratelimitd::test::heavy_hitters_test
