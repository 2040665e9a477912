// Probes as deployments use them: /readyz (shared deployments) follows the store, while
// /readyz?mode=sidecar stays 200 with the store down, so a Redis outage does not take every
// app pod out of its Service while policies answer by on_store_error.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ratelimitd::test::probes_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const char* config = R"(policies:
  open:
    algorithm: fixed_window
    limit: 5
    window: 60s
    on_store_error: allow
)";

TEST(Probes, SidecarReadinessStaysUpWhileRedisIsDownAndSharedReadinessDoesNot) {
    RedisServer redis;
    Ratelimitd server(config, redis.url());
    HttpClient c(server.port());
    ASSERT_EQ(c.get("/readyz").status, 200);
    auto sidecar = c.get("/readyz?mode=sidecar");
    ASSERT_EQ(sidecar.status, 200);
    EXPECT_EQ(json::parse(sidecar.body)["store"], "ready");

    redis.kill_hard();
    ASSERT_TRUE(wait_until([&] { return c.get("/readyz").status == 503; }, 10s));
    sidecar = c.get("/readyz?mode=sidecar");
    EXPECT_EQ(sidecar.status, 200);
    EXPECT_EQ(json::parse(sidecar.body)["status"], "ready");
    EXPECT_EQ(json::parse(sidecar.body)["store"], "not_ready");
    EXPECT_EQ(c.get("/readyz?mode=shared").status, 503);
    EXPECT_EQ(c.get("/healthz").status, 200);
    EXPECT_EQ(c.post("/v1/check", R"({"policy":"open","tenant":"t"})").status, 200) << "fails open as configured";
}

TEST(Probes, UnknownReadinessModeIsRefusedByName) {
    Ratelimitd server(config, "");
    HttpClient c(server.port());
    const auto res = c.get("/readyz?mode=sidecr");
    EXPECT_EQ(res.status, 400);
    EXPECT_NE(res.body.find("mode=sidecar"), std::string::npos) << res.body;
}

}  // namespace
}  // namespace ratelimitd::test::probes_test
