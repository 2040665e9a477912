// Routes with no default_policy leave a /v1/auth request no route matches unlimited: said at
// start, after a reload that brings it in and by --check-config, and counted in
// ratelimitd_auth_unmatched_total (a `policy: none` route is meant, so it is not counted).
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>
#include <string>

namespace ratelimitd::test::auth_unmatched_test {
namespace {

using namespace std::chrono_literals;

const std::string policies = R"(
policies:
  api: { algorithm: fixed_window, limit: 2, window: 60s }
)";
const std::string routes = R"(
routes:
  - { path: "/api/*", policy: api }
  - { path: /health, policy: none }
)";
const char* const warning = "routes are set but no default_policy";

int auth_status(unsigned short port, const std::string& uri) {
    HttpClient c(port);
    return c.get("/v1/auth", {{"X-Original-URI", uri}, {"X-Original-Method", "GET"}}).status;
}

double unmatched(unsigned short port) {
    HttpClient c(port);
    return sample(c.get("/metrics").body, "ratelimitd_auth_unmatched_total");
}

TEST(AuthUnmatched, StartWarnsAndEachUnmatchedRequestIsCounted) {
    Ratelimitd server(policies + routes, "", {"--watch-config", "off"});
    EXPECT_FALSE(server.process().wait_for_log(warning, process_start_bound).empty()) << server.process().log();
    EXPECT_EQ(unmatched(server.port()), 0);

    for (int i = 0; i < 5; ++i) EXPECT_EQ(auth_status(server.port(), "/elsewhere"), 200);
    EXPECT_EQ(unmatched(server.port()), 5);
    // Limited and meant-unlimited requests are not "unmatched".
    EXPECT_EQ(auth_status(server.port(), "/api/a"), 200);
    EXPECT_EQ(auth_status(server.port(), "/api/a"), 200);
    EXPECT_EQ(auth_status(server.port(), "/api/a"), 429);
    EXPECT_EQ(auth_status(server.port(), "/health"), 200);
    EXPECT_EQ(unmatched(server.port()), 5);
}

TEST(AuthUnmatched, ADefaultPolicyNeitherWarnsNorCountsAndAReloadThatDropsItWarns) {
    Ratelimitd server("default_policy: api\n" + policies + routes, "", {"--watch-config", "off"});
    EXPECT_EQ(auth_status(server.port(), "/elsewhere"), 200);
    EXPECT_EQ(unmatched(server.port()), 0);
    EXPECT_EQ(server.process().log().find(warning), std::string::npos) << server.process().log();

    server.write_config(policies + routes);
    server.process().signal(SIGHUP);
    ASSERT_FALSE(server.process().wait_for_log("reloaded path=", 20s).empty()) << server.process().log();
    EXPECT_FALSE(server.process().wait_for_log(warning, process_start_bound).empty()) << server.process().log();
    EXPECT_EQ(auth_status(server.port(), "/elsewhere"), 200);
    EXPECT_EQ(unmatched(server.port()), 1);
}

TEST(AuthUnmatched, CheckConfigWarnsAndStillPasses) {
    const std::string path = scratch_dir() + "/auth-unmatched-" + std::to_string(free_port()) + ".yaml";
    std::ofstream(path) << policies + routes;
    Child child({RATELIMITD_BINARY, "--check-config", path}, path + ".log");
    EXPECT_EQ(child.wait(process_start_bound), 0) << child.log();
    EXPECT_NE(child.log().find(path + ": warning: " + warning), std::string::npos) << child.log();
    EXPECT_NE(child.log().find(path + ": OK (1 policies, 2 routes)"), std::string::npos) << child.log();
}

}  // namespace
}  // namespace ratelimitd::test::auth_unmatched_test
