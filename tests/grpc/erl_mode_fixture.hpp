// ratelimitd in ERL mode, as an envoyproxy/ratelimit Deployment starts it: the real binary run
// through a `ratelimit` link with only ERL's variables (`env -i`), a runtime directory holding the
// config files, a real redis-server and a gRPC client built from Envoy's protos. Shared by the
// suites that serve envoyproxy/ratelimit's own configs (grpc_erl_examples_test,
// grpc_erl_compat_*_test), so each says only what it loads and what it asks.
#pragma once

#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace ratelimitd::test {

using ErlEntries = std::vector<std::pair<std::string, std::string>>;

/// Seconds since the epoch, the clock envoyproxy/ratelimit's windows are cut from.
inline std::int64_t epoch_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// envoyproxy/ratelimit's Redis key for `entries` of `domain` in the window of `unit_seconds`
/// holding `at`: prefix + domain + "_" + each key "_" value "_" + the window's start.
inline std::string erl_key(const std::string& domain, const ErlEntries& entries, std::int64_t unit_seconds,
                           std::int64_t at, const std::string& prefix = {}) {
    std::string key = prefix + domain + "_";
    for (const auto& [k, v] : entries) key += k + "_" + v + "_";
    return key + std::to_string(at / unit_seconds * unit_seconds);
}

class ErlModeTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("erl-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(config_dir());
        std::filesystem::create_symlink(RATELIMITD_BINARY, dir_ / "ratelimit");
        vars_ = {{"REDIS_SOCKET_TYPE", "tcp"},
                 {"REDIS_URL", "127.0.0.1:" + std::to_string(redis_.port())},
                 {"RUNTIME_ROOT", (dir_ / "runtime").string()},
                 {"RUNTIME_SUBDIRECTORY", "ratelimit"},
                 {"RUNTIME_WATCH_ROOT", "false"},
                 {"USE_STATSD", "false"},
                 {"LOG_LEVEL", "info"},
                 {"HOST", "127.0.0.1"},
                 {"GRPC_HOST", "127.0.0.1"},
                 {"DEBUG_HOST", "127.0.0.1"},
                 {"PORT", std::to_string(free_port())},
                 {"GRPC_PORT", std::to_string(free_port())},
                 {"DEBUG_PORT", std::to_string(free_port())},
                 // Not an ERL variable: ratelimitd's own wait for a store answer (50 ms unless
                 // set), widened as in the other suites, so that Redis answering late on a
                 // loaded machine is not taken for an outage. Outages here are a port nobody
                 // listens on, refused at once.
                 {"RATELIMITD_STORE_TIMEOUT", "2s"}};
    }
    void TearDown() override {
        process_ = Child();
        std::filesystem::remove_all(dir_);
    }

    std::filesystem::path config_dir() const { return dir_ / "runtime" / "ratelimit" / "config"; }
    unsigned short port(const std::string& variable) const {
        return static_cast<unsigned short>(std::stoi(vars_.at(variable)));
    }

    /// Puts `source` in the config directory, under `as` when given (one file loaded twice).
    void add_config(const std::filesystem::path& source, const std::string& as = {}) {
        std::filesystem::copy_file(source, config_dir() / (as.empty() ? source.filename().string() : as));
    }
    /// Starts ratelimitd as `ratelimit` (or as `program`, e.g. the binary with --erl-env) on the
    /// config directory as it is now, with only vars_ in its environment.
    Child& start(const std::vector<std::string>& program = {}) {
        std::vector<std::string> argv{"/usr/bin/env", "-i"};
        for (const auto& [name, value] : vars_) argv.push_back(name + "=" + value);
        if (program.empty()) argv.push_back((dir_ / "ratelimit").string());
        argv.insert(argv.end(), program.begin(), program.end());
        process_ = Child(argv, (dir_ / "log").string());
        return process_;
    }
    /// Starts it and waits until gRPC answers.
    void serve() {
        start();
        ASSERT_FALSE(process_.wait_for_log("grpc listening on", process_start_bound).empty()) << process_.log();
        client_.emplace(port("GRPC_PORT"));
    }
    /// Starts it and expects the start refused: a non-zero exit whose log says `because`.
    void expect_refused(const std::string& because) {
        start();
        EXPECT_NE(process_.wait(process_start_bound), 0) << process_.log();
        EXPECT_NE(process_.log().find(because), std::string::npos) << "expected: " << because << "\n" << process_.log();
    }

    /// One call: one descriptor per `descriptors`, each with its own hits_addend when given.
    RlsResponse call(const std::string& domain, const std::vector<ErlEntries>& descriptors,
                     const std::vector<std::uint64_t>& hits = {}) {
        std::vector<Descriptor> ds;
        for (std::size_t i = 0; i < descriptors.size(); ++i) {
            ds.push_back(Descriptor{descriptors[i], i < hits.size() ? std::optional(hits[i]) : std::nullopt});
        }
        return call(rls_request(domain, ds));
    }
    RlsResponse call(const RlsRequest& request) {
        RlsResponse res;
        if (!client_) {
            ADD_FAILURE() << "not serving";
            return res;
        }
        const auto status = client_->call(request, res);
        EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message() << "\n" << process_.log();
        return res;
    }
    /// The limit a lone descriptor reaches: "none", "unlimited" or "N/UNIT name".
    std::string limit_of(const std::string& domain, const ErlEntries& entries) {
        const RlsResponse res = call(domain, {entries});
        if (res.statuses_size() != 1) return "no answer";
        const auto& s = res.statuses(0);
        if (!s.has_current_limit()) return s.limit_remaining() == 4'294'967'295u ? "unlimited" : "none";
        std::string out = std::to_string(s.current_limit().requests_per_unit()) + "/" +
                          RlsResponse::RateLimit::Unit_Name(s.current_limit().unit());
        if (!s.current_limit().name().empty()) out += " " + s.current_limit().name();
        return out;
    }
    /// Every counter of the test starts at zero.
    void fresh_counters() { redis_.command({"FLUSHALL"}); }

    RedisServer redis_;
    std::filesystem::path dir_;
    std::map<std::string, std::string> vars_;
    Child process_;
    std::optional<RlsClient> client_;
};

}  // namespace ratelimitd::test
