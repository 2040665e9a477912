// JSON log lines from the real binary carry each key=value of an event as a member of its
// own: a store failure (Redis down) and an access line, queried by field, not by msg.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <sstream>

namespace ratelimitd::test::json_log_fields_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const char* const config = R"(
access_log: all
policies:
  login:
    algorithm: fixed_window
    limit: 5
    window: 60s
    on_store_error: deny
)";

/// The JSON lines of `log` whose msg is `msg`.
std::vector<json> lines_with_msg(const std::string& log, const std::string& msg) {
    std::vector<json> out;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
        auto parsed = json::parse(line, nullptr, false);
        EXPECT_FALSE(parsed.is_discarded()) << line;
        if (!parsed.is_discarded() && parsed.value("msg", "") == msg) out.push_back(std::move(parsed));
    }
    return out;
}

TEST(JsonLogFields, StoreFailureAndAccessLinesCarryTheirFields) {
    RedisServer redis;
    Ratelimitd server(config, redis.url(), {"--log-format", "json"});
    HttpClient c(server.port());
    ASSERT_EQ(c.post("/v1/check", R"({"policy":"login","tenant":"ip:192.0.2.7"})", {{"X-Request-Id", "log-1"}}).status,
              200);
    redis.kill_hard();
    // on_store_error: deny answers 429 (or 503) once the store fails; wait for the line itself.
    for (int i = 0; i < 50 && server.process().log().find("store failure") == std::string::npos; ++i) {
        c.post("/v1/check", R"({"policy":"login","tenant":"ip:192.0.2.7"})");
    }
    ASSERT_FALSE(server.process().wait_for_log("store failure", 10s).empty()) << server.process().log();
    server.process().signal(SIGTERM);
    ASSERT_EQ(server.process().wait(process_start_bound), 0);
    const std::string log = server.process().log();

    const auto failures = lines_with_msg(log, "store failure");
    ASSERT_FALSE(failures.empty()) << log;
    EXPECT_EQ(failures[0]["level"], "warning");
    EXPECT_EQ(failures[0]["policy"], "login");
    EXPECT_EQ(failures[0]["outcome"], "fail_closed");
    EXPECT_TRUE(failures[0]["error"] == "store_unavailable" || failures[0]["error"] == "store_timeout")
        << failures[0];
    EXPECT_TRUE(failures[0].contains("detail")) << failures[0];

    const auto access = lines_with_msg(log, "access");
    ASSERT_FALSE(access.empty()) << log;
    EXPECT_EQ(access[0]["request_id"], "log-1");
    EXPECT_EQ(access[0]["policy"], "login");
    EXPECT_EQ(access[0]["tenant"], "ip:192.0.2.7");
    EXPECT_EQ(access[0]["verdict"], "allowed");
    EXPECT_EQ(access[0]["status"], "200");

    std::istringstream lines(log);
    int listening = 0;
    for (std::string line; std::getline(lines, line);) {
        const auto parsed = json::parse(line, nullptr, false);
        if (parsed.is_discarded() || !parsed.value("msg", "").starts_with("listening on ")) continue;
        ++listening;
        EXPECT_EQ(parsed["policies"], "1") << line;
        EXPECT_TRUE(parsed.contains("store") && parsed.contains("threads")) << line;
    }
    EXPECT_EQ(listening, 1) << log;
}

}  // namespace
}  // namespace ratelimitd::test::json_log_fields_test
