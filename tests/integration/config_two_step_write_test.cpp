// Issue 31 (Low): a config file written in two steps (`cat a > f; cat b >> f`) is closed after
// each step. The watcher waits until the file has been quiet before it reloads, so no request
// between the steps is answered by the half-written file: here the first half holds the
// policies and the second the routes, and /v1/auth must never answer /login unlimited.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

namespace ratelimitd::test::config_two_step_write_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Everything but the routes; `limit` tells the versions apart.
std::string policies_part(int limit) {
    return "policies:\n  login:\n    algorithm: fixed_window\n    limit: " + std::to_string(limit) +
           "\n    window: 1h\n";
}
const std::string routes_part = "routes:\n  - { path: /login, policy: login }\n";

// The /v1/auth answer for /login: the limit it was decided by, 0 when none (unlimited).
long login_limit(HttpClient& c) {
    const auto res = c.get("/v1/auth", {{"X-Original-URI", "/login"}});
    const auto limit = res.header("x-ratelimit-limit");
    return limit.empty() ? 0 : std::stol(limit);
}

TEST(ConfigTwoStepWrite, NoRequestBetweenTheStepsSeesTheHalfWrittenFile) {
    const fs::path dir = fs::path(scratch_dir()) / "two-step-write";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const auto file = dir / "config.yaml";
    std::ofstream(file) << policies_part(1000) << routes_part;
    Ratelimitd server(policies_part(1), "", {"--config", file.string()});
    HttpClient probe(server.port());
    ASSERT_EQ(login_limit(probe), 1000) << server.process().log();

    std::atomic<bool> done{false};
    std::atomic<int> unlimited{0}, answers{0};
    std::thread watcher([&] {
        HttpClient c(server.port());
        while (!done) {
            unlimited += login_limit(c) == 0;
            ++answers;
        }
    });
    // `cat a > f`, a pause shorter than the quiet time, `cat b >> f`.
    std::ofstream(file) << policies_part(2000);
    std::this_thread::sleep_for(100ms);
    std::ofstream(file, std::ios::app) << routes_part;
    const bool reloaded = wait_until([&] { return login_limit(probe) == 2000; }, 10s);
    done = true;
    watcher.join();
    EXPECT_TRUE(reloaded) << server.process().log();
    EXPECT_GT(answers.load(), 10);
    EXPECT_EQ(unlimited.load(), 0) << "answers from the file without its routes, of " << answers.load();
    EXPECT_EQ(server.process().log().find("reload refused"), std::string::npos) << server.process().log();
}

}  // namespace
}  // namespace ratelimitd::test::config_two_step_write_test
