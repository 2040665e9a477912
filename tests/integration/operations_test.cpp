// Operations: /metrics (valid Prometheus text that moves exactly with the checks), admin
// endpoints behind a bearer token, X-Request-Id, and the access log.
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

namespace ratelimitd::test::operations_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string admin_token = "test-admin-token-0123456789";
const std::map<std::string, std::string> as_admin = {{"Authorization", "Bearer " + admin_token}};

const char* const config = R"(
access_log: denied
policies:
  five:
    algorithm: fixed_window
    limit: 5
    window: 60s
  bucket:
    algorithm: token_bucket
    limit: 10
    window: 60s
)";

class Operations : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        redis_ = new RedisServer();
        server_ = new Ratelimitd(config, redis_->url(), {}, {"RATELIMITD_ADMIN_TOKEN=" + admin_token});
    }
    static void TearDownTestSuite() {
        delete server_;
        delete redis_;
    }
    static std::string metrics() {
        HttpClient c(server_->port());
        auto res = c.get("/metrics");
        EXPECT_EQ(res.status, 200);
        EXPECT_NE(res.header("content-type").find("text/plain"), std::string::npos);
        return res.body;
    }
    static RedisServer* redis_;
    static Ratelimitd* server_;
};
RedisServer* Operations::redis_ = nullptr;
Ratelimitd* Operations::server_ = nullptr;

TEST_F(Operations, CountersMoveExactlyWithTheChecks) {
    const auto before = metrics();
    const std::string allowed = "ratelimitd_checks_total{policy=\"five\",verdict=\"allowed\"}";
    const std::string denied = "ratelimitd_checks_total{policy=\"five\",verdict=\"denied\"}";
    const double a0 = std::max(0.0, sample(before, allowed));
    const double d0 = std::max(0.0, sample(before, denied));
    const double calls0 = std::max(0.0, sample(before, "ratelimitd_redis_check_calls_total"));
    const double carried0 = std::max(0.0, sample(before, "ratelimitd_redis_coalesced_checks_total"));
    auto tally = fire(server_->port(), 7, 7, [](HttpClient& c) {
        return c.post("/v1/check", R"({"policy":"five","tenant":"counted"})");
    });
    ASSERT_EQ(tally.allowed, 5);
    const auto after = metrics();
    EXPECT_EQ(sample(after, allowed) - a0, 5);
    EXPECT_EQ(sample(after, denied) - d0, 2);
    EXPECT_GE(sample(after, "ratelimitd_http_requests_total{route=\"/v1/check\",status=\"429\"}"), 2);
    EXPECT_GE(sample(after, "ratelimitd_store_latency_seconds_count"), 7);
    EXPECT_EQ(sample(after, "ratelimitd_circuit_breakers_open"), 0);
    // The 5 admitted checks reached Redis (denials may come from the denial cache), in at
    // most as many calls as checks.
    const double calls = sample(after, "ratelimitd_redis_check_calls_total") - calls0;
    const double carried = sample(after, "ratelimitd_redis_coalesced_checks_total") - carried0;
    EXPECT_GE(carried, 5);
    EXPECT_GE(calls, 1);
    EXPECT_LE(calls, carried);
    EXPECT_EQ(after.find("counted"), std::string::npos) << "tenant ids never become label values";
}

TEST_F(Operations, MetricsPassPromtool) {
    HttpClient c(server_->port());
    c.post("/v1/check", R"({"policy":"bucket","tenant":"promtool"})");
    const std::string path = scratch_dir() + "/metrics.txt";
    std::ofstream(path) << metrics();
    if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "promtool is not installed (scripts/install-deps.sh installs it)";
    }
    const std::string cmd = "promtool check metrics < " + path + " > " + path + ".out 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream out(path + ".out");
    const std::string report((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
    EXPECT_EQ(rc, 0) << report;
}

TEST_F(Operations, AdminEndpointsRefuseAMissingOrWrongTokenWithoutAHint) {
    HttpClient c(server_->port());
    for (const auto& headers : std::vector<std::map<std::string, std::string>>{
             {}, {{"Authorization", "Bearer wrong"}}, {{"Authorization", "Bearer " + admin_token + "x"}},
             {{"Authorization", admin_token}}}) {
        auto res = c.get("/v1/policies", headers);
        EXPECT_EQ(res.status, 401);
        EXPECT_EQ(res.body.find(admin_token.substr(0, 6)), std::string::npos);
        EXPECT_EQ(c.get("/v1/peek?policy=five&tenant=x", headers).status, 401);
        EXPECT_EQ(c.post("/v1/reset", R"({"policy":"five","tenant":"x"})", headers).status, 401);
    }
}

TEST_F(Operations, PoliciesShowTheLoadedRegistryWithItsFileHash) {
    HttpClient c(server_->port());
    auto res = c.get("/v1/policies", as_admin);
    ASSERT_EQ(res.status, 200);
    auto body = json::parse(res.body);
    EXPECT_EQ(body["file"], server_->config_path());
    EXPECT_EQ(body["sha256"].get<std::string>().size(), 64u);
    EXPECT_GT(body["loaded_at"].get<long long>(), 1'700'000'000);
    EXPECT_EQ(body["policies"]["five"]["algorithm"], "fixed_window");
    EXPECT_EQ(body["policies"]["five"]["limit"], 5);
    EXPECT_EQ(body["policies"]["five"]["window"], "1m");
}

TEST_F(Operations, PeekChangesNothingAndResetMakesTheNextCheckPass) {
    HttpClient c(server_->port());
    for (int i = 0; i < 5; ++i) ASSERT_EQ(c.post("/v1/check", R"({"policy":"five","tenant":"support"})").status, 200);
    ASSERT_EQ(c.post("/v1/check", R"({"policy":"five","tenant":"support"})").status, 429);

    const auto counter = redis_->command({"GET", "rl:five:support:global"});
    const auto keys = redis_->integer({"DBSIZE"});
    for (int i = 0; i < 3; ++i) {
        auto peek = c.get("/v1/peek?policy=five&tenant=support", as_admin);
        ASSERT_EQ(peek.status, 200) << peek.body;
        auto body = json::parse(peek.body);
        EXPECT_EQ(body["remaining"], 0);
        EXPECT_EQ(body["limit"], 5);
    }
    auto fresh = json::parse(c.get("/v1/peek?policy=bucket&tenant=nobody", as_admin).body);
    EXPECT_EQ(fresh["remaining"], 10);
    EXPECT_EQ(redis_->command({"GET", "rl:five:support:global"}), counter);
    EXPECT_EQ(redis_->integer({"DBSIZE"}), keys) << "peek writes nothing";

    auto reset = c.post("/v1/reset", R"({"policy":"five","tenant":"support"})", as_admin);
    ASSERT_EQ(reset.status, 200) << reset.body;
    EXPECT_EQ(json::parse(reset.body)["reset"], true);
    EXPECT_EQ(c.post("/v1/check", R"({"policy":"five","tenant":"support"})").status, 200);
    EXPECT_EQ(c.post("/v1/reset", R"({"policy":"nope","tenant":"support"})", as_admin).status, 400);
}

TEST_F(Operations, RequestIdIsEchoedOrGeneratedAndLogged) {
    HttpClient c(server_->port());
    auto res = c.post("/v1/check", R"({"policy":"five","tenant":"rid"})", {{"X-Request-Id", "abc-123"}});
    EXPECT_EQ(res.header("x-request-id"), "abc-123");
    auto generated = c.get("/healthz");
    const std::string id = generated.header("x-request-id");
    EXPECT_EQ(id.size(), 16u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
    auto injected = c.get("/healthz", {{"X-Request-Id", "bad id\"with quotes"}});
    EXPECT_NE(injected.header("x-request-id"), "bad id\"with quotes");

    for (int i = 0; i < 5; ++i) c.post("/v1/check", R"({"policy":"five","tenant":"audited"})");
    c.post("/v1/check", R"({"policy":"five","tenant":"audited"})", {{"X-Request-Id", "deny-42"}});
    const auto line = server_->process().wait_for_log("request_id=deny-42", process_start_bound);
    ASSERT_FALSE(line.empty()) << "access_log: denied writes one line per denial";
    EXPECT_NE(line.find("policy=five"), std::string::npos);
    EXPECT_NE(line.find("tenant=audited"), std::string::npos);
    EXPECT_NE(line.find("verdict=denied"), std::string::npos);
    EXPECT_EQ(server_->process().log().find("tenant=rid"), std::string::npos) << "allowed checks are not logged";
}

}  // namespace
}  // namespace ratelimitd::test::operations_test
