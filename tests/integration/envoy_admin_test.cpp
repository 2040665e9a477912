// /v1/envoy/peek and /v1/envoy/reset against the real binary and a real Redis: a descriptor's
// counter, charged in Redis under the key the planner lays out, is reported and forgotten.
#include "support/http_client.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <ctime>

namespace ratelimitd::test::envoy_admin_test {
namespace {

using json = nlohmann::json;

const std::string config = R"(
domains:
  - domain: edge
    descriptors:
      - {key: remote_address, rate_limit: {unit: day, requests_per_unit: 10}}
      - {key: remote_address, value: 10.0.0.1}
)";

/// The key of remote_address=192.0.2.7 in today's window (docs/envoy-config.md, "Keys").
std::string todays_key() {
    const long long now = static_cast<long long>(std::time(nullptr));
    return "rl:envoy/edge.remote%5Faddress:192%2E0%2E2%2E7:" + std::to_string(now / 86400 * 86400);
}

TEST(EnvoyAdmin, PeekReportsAndResetForgetsADescriptorsCounter) {
    RedisServer redis;
    Ratelimitd server(config, redis.url());
    HttpClient c(server.port());
    const std::string key = todays_key();
    redis.command({"SET", key, "4", "EX", "600"});

    auto res = c.get("/v1/envoy/peek?domain=edge&remote_address=192.0.2.7");
    ASSERT_EQ(res.status, 200) << res.body;
    json body = json::parse(res.body);
    EXPECT_EQ(body["rule"], "edge.remote_address");
    EXPECT_EQ(body["limited"], true);
    EXPECT_EQ(body["limit"], 10);
    EXPECT_EQ(body["unit"], "day");
    EXPECT_EQ(body["remaining"], 6) << "read from the key the planner lays out";
    EXPECT_EQ(redis.command({"GET", key}), "4") << "a peek consumes nothing";

    res = c.post("/v1/envoy/reset?domain=edge&remote_address=192.0.2.7", "");
    ASSERT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(json::parse(res.body)["reset"], true);
    EXPECT_EQ(redis.command({"EXISTS", key}), "0");
    res = c.get("/v1/envoy/peek?domain=edge&remote_address=192.0.2.7");
    EXPECT_EQ(json::parse(res.body)["remaining"], 10);
}

TEST(EnvoyAdmin, AnUnlimitedDescriptorHasNoCounterAndBadNamesAreRefused) {
    Ratelimitd server(config, "");
    HttpClient c(server.port());
    auto res = c.get("/v1/envoy/peek?domain=edge&remote_address=10.0.0.1");
    ASSERT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(json::parse(res.body)["limited"], false);
    EXPECT_EQ(json::parse(res.body)["rule"], "edge.remote_address_10.0.0.1");

    res = c.get("/v1/envoy/peek?domain=core&remote_address=10.0.0.1");
    EXPECT_EQ(res.status, 400) << res.body;
    EXPECT_EQ(json::parse(res.body)["detail"], "domain: \"core\" is not a configured domain");
    res = c.get("/v1/envoy/peek?domain=edge");
    EXPECT_EQ(res.status, 400) << res.body;
    EXPECT_EQ(json::parse(res.body)["detail"], "descriptors[0].entries: expected at least one entry");
    EXPECT_EQ(c.post("/v1/envoy/peek?domain=edge&remote_address=1", "").status, 405);
}

TEST(EnvoyAdmin, BothEndpointsNeedTheAdminTokenWhenOneIsSet) {
    const std::string token = "envoy-admin-token-0123456789";
    Ratelimitd server(config, "", {}, {"RATELIMITD_ADMIN_TOKEN=" + token});
    HttpClient c(server.port());
    const std::string target = "/v1/envoy/peek?domain=edge&remote_address=192.0.2.7";
    EXPECT_EQ(c.get(target).status, 401);
    EXPECT_EQ(c.get(target, {{"Authorization", "Bearer wrong-token-0123456789"}}).status, 401);
    EXPECT_EQ(c.post("/v1/envoy/reset?domain=edge&remote_address=192.0.2.7", "").status, 401);
    EXPECT_EQ(c.get(target, {{"Authorization", "Bearer " + token}}).status, 200);
}

}  // namespace
}  // namespace ratelimitd::test::envoy_admin_test
