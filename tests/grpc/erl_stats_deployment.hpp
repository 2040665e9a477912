// An ERL-mode ratelimitd for the stats tests: the `ratelimit` link started with only
// envoyproxy/ratelimit's variables, a runtime directory holding `rules`, a real redis-server.
#pragma once

#include "support/held_window.hpp"
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace ratelimitd::test {

class ErlStatsDeployment : public ::testing::Test {
protected:
    void SetUp() override {
        namespace fs = std::filesystem;
        dir_ = fs::temp_directory_path() / ("erl-stats-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "runtime" / "ratelimit" / "config");
        fs::create_symlink(RATELIMITD_BINARY, dir_ / "ratelimit");
        vars_ = {{"REDIS_SOCKET_TYPE", "tcp"},
                 {"REDIS_URL", "127.0.0.1:" + std::to_string(redis_.port())},
                 {"RUNTIME_ROOT", (dir_ / "runtime").string()},
                 {"RUNTIME_SUBDIRECTORY", "ratelimit"},
                 {"RUNTIME_WATCH_ROOT", "false"},
                 {"LOG_LEVEL", "info"},
                 {"HOST", "127.0.0.1"},
                 {"GRPC_HOST", "127.0.0.1"},
                 {"DEBUG_HOST", "127.0.0.1"},
                 {"PORT", std::to_string(free_port())},
                 {"GRPC_PORT", std::to_string(free_port())},
                 {"DEBUG_PORT", std::to_string(free_port())},
                 // Not an ERL variable: a wider store wait, as in erl_mode_fixture.hpp.
                 {"RATELIMITD_STORE_TIMEOUT", "2s"}};
    }
    void TearDown() override {
        process_ = Child();
        std::filesystem::remove_all(dir_);
    }

    void write_rules(const std::string& yaml) {
        std::ofstream(dir_ / "runtime" / "ratelimit" / "config" / "rules.yaml") << yaml;
    }
    unsigned short port(const std::string& name) const {
        return static_cast<unsigned short>(std::stoi(vars_.at(name)));
    }
    Child& start() {
        std::vector<std::string> argv{"/usr/bin/env", "-i"};
        for (const auto& [name, value] : vars_) argv.push_back(name + "=" + value);
        argv.push_back((dir_ / "ratelimit").string());
        process_ = Child(argv, (dir_ / "log").string());
        return process_;
    }
    void start_serving() {
        start();
        ASSERT_FALSE(process_.wait_for_log("grpc listening on", process_start_bound).empty()) << process_.log();
    }
    /// Runs `attempt` (it serves, calls and checks) until one aligned hour holds it: the rules
    /// count per hour, and an hour that began mid-attempt restarts the counts the stats classify
    /// (in_one_window). Each attempt starts from flushed counters and no process (stats at 0),
    /// nor its log: the next process truncates it only once forked, and a wait for a line could
    /// meet the last one's.
    template <class Attempt>
    void in_one_hour(Attempt attempt) {
        in_one_window(std::chrono::hours(1), [&](int) {
            process_ = Child();
            std::filesystem::remove(dir_ / "log");
            redis_.command({"FLUSHALL"});
            attempt();
        });
    }
    /// The value of the exact series `series` on /metrics of `http_port`, or -1 when absent.
    static double series_value(unsigned short http_port, const std::string& series) {
        HttpClient http(http_port);
        const auto body = http.get("/metrics").body;
        const auto at = body.find("\n" + series + " ");
        if (at == std::string::npos) return -1;
        return std::stod(body.substr(at + series.size() + 2));
    }

    RedisServer redis_;
    std::filesystem::path dir_;
    std::map<std::string, std::string> vars_;
    Child process_;
};

/// Calls with one descriptor of `entries` `times` times; how many were answered OVER_LIMIT.
inline int call_times(RlsClient& client, const std::string& domain,
                      const std::vector<std::pair<std::string, std::string>>& entries, int times) {
    int over = 0;
    for (int i = 0; i < times; ++i) {
        if (client.code(rls_request(domain, {Descriptor{entries, std::nullopt}})) == RlsResponse::OVER_LIMIT) ++over;
    }
    return over;
}

}  // namespace ratelimitd::test
