// ERL mode end to end: the real binary started as `ratelimit` (a symlink, as the image's
// /bin/ratelimit) with only envoyproxy/ratelimit's variables (`env -i`), a real redis-server, a
// gRPC client from Envoy's protos; its runtime directory replaced and swapped as Kubernetes
// swaps a ConfigMap; and every refusal exiting non-zero, naming its variable.
#include "grpc/erl_mode_fixture.hpp"
#include "grpc/xds_control_plane.hpp"
#include "support/concurrent_calls.hpp"
#include "support/held_window.hpp"
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace ratelimitd::test::grpc_erl_mode_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string rules(const std::string& domain, int per_hour) {
    return "domain: " + domain + "\ndescriptors:\n  - key: user\n    rate_limit: {unit: hour, requests_per_unit: " +
           std::to_string(per_hour) + "}\n";
}

void write_file(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

// A runtime directory, a `ratelimit` link to the binary, and the ERL variables of a Deployment
// (erl_mode_fixture.hpp), with dot files ignored as a ConfigMap needs.
class ErlDeployment : public ErlModeTest {
protected:
    void SetUp() override {
        ErlModeTest::SetUp();
        vars_["RUNTIME_IGNOREDOTFILES"] = "true";
        vars_["LOG_LEVEL"] = "debug";
    }

    void start_serving(const std::vector<std::string>& program) {
        start(program);
        ASSERT_FALSE(process_.wait_for_log("grpc listening on", process_start_bound).empty()) << process_.log();
        ASSERT_TRUE(wait_until([&] { return can_connect(port("DEBUG_PORT")); }, process_start_bound)) << process_.log();
    }
    std::vector<std::string> link() const { return {(dir_ / "ratelimit").string()}; }

    /// The limit served for `user` of `domain` now (0 when the call fails or nothing matches).
    std::uint32_t served_limit(RlsClient& client, const std::string& domain, const std::string& user) {
        RlsResponse res;
        if (!client.call(rls_request(domain, {Descriptor{{{"user", user}}, std::nullopt}}), res).ok()) return 0;
        if (res.statuses_size() != 1 || !res.statuses(0).has_current_limit()) return 0;
        return res.statuses(0).current_limit().requests_per_unit();
    }
};

// The Deployment's own variables, nothing else: gRPC decides exactly (concurrent calls, exactly
// the limit admitted), /healthcheck and /json answer on PORT, /rlconfig on DEBUG_PORT.
TEST_F(ErlDeployment, ServesAnErlDeploymentStartedAsRatelimit) {
    write_file(config_dir() / "rules.yaml", rules("erl", 20));
    start_serving(link());
    RlsClient client(port("GRPC_PORT"));
    HttpClient http(port("PORT"));
    const std::string call = R"({"domain":"erl","descriptors":[{"entries":[{"key":"user","value":"bob"}]}]})";
    in_one_window(1h, [&](int) {
        redis_.command({"FLUSHALL"});  // the counts of one hour window, from none
        std::atomic<int> admitted{0}, denied{0};
        run_concurrently(8, [&](int) {
            RlsClient own(port("GRPC_PORT"));
            for (int i = 0; i < 6; ++i) {
                const auto code = own.code(rls_request("erl", {Descriptor{{{"user", "alice"}}, std::nullopt}}));
                (code == RlsResponse::OK ? admitted : denied)++;
            }
        });
        EXPECT_EQ(admitted.load(), 20);
        EXPECT_EQ(denied.load(), 28);

        const auto health = http.get("/healthcheck");
        EXPECT_EQ(health.status, 200);
        EXPECT_EQ(health.body, "OK");
        const auto first = http.post("/json", call);
        EXPECT_EQ(first.status, 200) << first.body;
        EXPECT_NE(first.body.find(R"("overallCode":"OK")"), std::string::npos) << first.body;
        EXPECT_NE(first.body.find(R"("limitRemaining":19)"), std::string::npos) << first.body;
        const auto over =
            http.post("/json", R"({"domain":"erl","descriptors":[{"entries":[{"key":"user","value":"alice"}]}]})");
        EXPECT_EQ(over.status, 429);
        EXPECT_NE(over.body.find(R"("overallCode":"OVER_LIMIT")"), std::string::npos) << over.body;
    });
    EXPECT_EQ(http.post("/json", R"({"domain":"erl","descriptors":[{"entries":[{"key":"user"}]}],"bogus":1})").status,
              400);
    EXPECT_EQ(http.post("/json", "not json").status, 400);

    HttpClient debug(port("DEBUG_PORT"));
    const auto dump = debug.get("/rlconfig");
    EXPECT_EQ(dump.status, 200);
    EXPECT_NE(dump.body.find("erl.user: unit=HOUR requests_per_unit=20"), std::string::npos) << dump.body;
    EXPECT_EQ(debug.get("/metrics").status, 200);
    EXPECT_EQ(debug.post("/json", call).status, 404) << "the debug listener serves its own routes only";
    EXPECT_EQ(debug.get("/v1/policies").status, 404);
}

long long script_calls(const RedisServer& redis) {
    const std::string stats = redis.command({"INFO", "commandstats"});
    long long calls = 0;
    for (const std::string name : {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="}) {
        const auto at = stats.find(name);
        if (at != std::string::npos) calls += std::stoll(stats.substr(at + name.size()));
    }
    return calls;
}

// POST /json, a door for anyone: the gRPC call's bounds (descriptors), a 16 KiB body, and one
// script call per call; a refused call reaches no Redis.
TEST_F(ErlDeployment, JsonIsBoundedLikeTheGrpcCall) {
    write_file(config_dir() / "rules.yaml", rules("erl", 100));
    start_serving(link());
    HttpClient http(port("PORT"));
    const std::string one = R"({"entries":[{"key":"user","value":"gina"}]})";
    const auto before = script_calls(redis_);
    EXPECT_EQ(http.post("/json", R"({"domain":"erl","descriptors":[)" + one + "]}").status, 200);
    EXPECT_EQ(script_calls(redis_) - before, 1);
    std::string many = R"({"domain":"erl","descriptors":[)" + one;
    for (int i = 0; i < 64; ++i) many += "," + one;
    many += "]}";
    const auto keys = redis_.keys().size();
    EXPECT_EQ(http.post("/json", many).status, 400) << "65 descriptors: over the gRPC call's 64";
    HttpClient fresh(port("PORT"));
    const std::string padded = R"({"domain":")" + std::string(17 * 1024, 'x') + R"(","descriptors":[)" + one + "]}";
    EXPECT_EQ(fresh.post("/json", padded).status, 413);
    EXPECT_EQ(script_calls(redis_) - before, 1) << "a refused call reaches no Redis";
    EXPECT_EQ(redis_.keys().size(), keys);
}

// A file replaced in the runtime directory (written aside, renamed over) is served at once.
TEST_F(ErlDeployment, AReplacedFileIsReloaded) {
    write_file(config_dir() / "rules.yaml", rules("erl", 2));
    start_serving(link());
    RlsClient client(port("GRPC_PORT"));
    EXPECT_EQ(served_limit(client, "erl", "carol"), 2u);
    write_file(dir_ / "next.yaml", rules("erl", 5));
    fs::rename(dir_ / "next.yaml", config_dir() / "rules.yaml");
    EXPECT_TRUE(wait_until([&] { return served_limit(client, "erl", "carol") == 5; }, 10s)) << process_.log();
    // A second file with a new domain is read too.
    write_file(dir_ / "more.yaml", rules("other", 7));
    fs::rename(dir_ / "more.yaml", config_dir() / "more.yaml");
    EXPECT_TRUE(wait_until([&] { return served_limit(client, "other", "dave") == 7; }, 10s)) << process_.log();
    // A file removed takes its domain with it.
    fs::remove(config_dir() / "more.yaml");
    EXPECT_TRUE(wait_until([&] { return served_limit(client, "other", "dave") == 0; }, 10s)) << process_.log();
}

// A ConfigMap update: the files are links through `..data`, which is swapped (a new link renamed
// over it) to a new timestamped directory.
TEST_F(ErlDeployment, AConfigMapSymlinkSwapIsReloaded) {
    const fs::path config = config_dir();
    write_file(config / "..2026_12_02_10_00_00.1" / "rules.yaml", rules("erl", 1));
    fs::create_directory_symlink("..2026_12_02_10_00_00.1", config / "..data");
    fs::create_symlink("..data/rules.yaml", config / "rules.yaml");
    start_serving(link());
    RlsClient client(port("GRPC_PORT"));
    EXPECT_EQ(served_limit(client, "erl", "erin"), 1u);
    write_file(config / "..2026_12_02_10_05_00.2" / "rules.yaml", rules("erl", 3));
    fs::create_directory_symlink("..2026_12_02_10_05_00.2", config / "..data_tmp");
    fs::rename(config / "..data_tmp", config / "..data");
    fs::remove_all(config / "..2026_12_02_10_00_00.1");
    EXPECT_TRUE(wait_until([&] { return served_limit(client, "erl", "erin") == 3; }, 10s)) << process_.log();
    EXPECT_NE(process_.log().find("reloaded"), std::string::npos);
}

// RUNTIME_WATCH_ROOT=true (envoyproxy/ratelimit's default): RUNTIME_ROOT is a symlink, swapped
// to a new tree by a deploy; the swap reloads.
TEST_F(ErlDeployment, ASwappedRootSymlinkIsReloadedWhenWatchingTheRoot) {
    write_file(dir_ / "v1" / "ratelimit" / "config" / "rules.yaml", rules("erl", 4));
    write_file(dir_ / "v2" / "ratelimit" / "config" / "rules.yaml", rules("erl", 6));
    fs::remove_all(dir_ / "runtime");
    fs::create_directory_symlink(dir_ / "v1", dir_ / "runtime");
    vars_["RUNTIME_WATCH_ROOT"] = "true";
    start_serving(link());
    RlsClient client(port("GRPC_PORT"));
    EXPECT_EQ(served_limit(client, "erl", "hank"), 4u);
    fs::create_directory_symlink(dir_ / "v2", dir_ / "runtime.next");
    fs::rename(dir_ / "runtime.next", dir_ / "runtime");
    EXPECT_TRUE(wait_until([&] { return served_limit(client, "erl", "hank") == 6; }, 10s)) << process_.log();
}

// Each refusal exits non-zero before serving, naming the variable; --erl-env is the same road.
TEST_F(ErlDeployment, RefusalsExitNamingTheVariable) {
    write_file(config_dir() / "rules.yaml", rules("erl", 2));
    const std::vector<std::pair<std::string, std::string>> refused{
        {"BACKEND_TYPE", "memcache"}, {"RESPONSE_DYNAMIC_METADATA", "true"}, {"PORT", "http"}, {"REDIS_SOCKET_TYPE", "unix"}};
    for (const auto& program : {link(), std::vector<std::string>{RATELIMITD_BINARY, "--erl-env"}}) {
        for (const auto& [name, value] : refused) {
            SCOPED_TRACE(name + "=" + value + " " + program.back());
            const auto kept = vars_;
            vars_[name] = value;
            Child& child = start(program);
            EXPECT_EQ(child.wait(process_start_bound), 1);
            EXPECT_NE(child.log().find(name + ": "), std::string::npos) << child.log();
            vars_ = kept;
        }
    }
}

TEST_F(ErlDeployment, TheErlEnvFlagServesAsTheLinkDoes) {
    write_file(config_dir() / "rules.yaml", rules("erl", 3));
    start_serving({RATELIMITD_BINARY, "--erl-env"});
    RlsClient client(port("GRPC_PORT"));
    int admitted = 0;
    for (int i = 0; i < 5; ++i) {
        admitted += client.code(rls_request("erl", {Descriptor{{{"user", "frank"}}, std::nullopt}})) == RlsResponse::OK;
    }
    EXPECT_EQ(admitted, 3);
    HttpClient http(port("PORT"));
    EXPECT_EQ(http.get("/healthcheck").status, 200);
}

// Envoy Gateway's way: CONFIG_TYPE=GRPC_XDS_SOTW, the rules from a control plane (written for the
// tests from the published ADS protocol), no runtime directory. STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT
// unset is envoyproxy/ratelimit's `charge`: every call counts, past the limit too, in its keys.
// SHADOW_MODE=true then lets every call through while the descriptor still says OVER_LIMIT.
TEST_F(ErlDeployment, TakesItsRulesFromAnXdsControlPlaneAsEnvoyGatewayStartsIt) {
    XdsControlPlane cp;
    for (const char* name : {"RUNTIME_ROOT", "RUNTIME_SUBDIRECTORY", "RUNTIME_WATCH_ROOT", "RUNTIME_IGNOREDOTFILES"}) {
        vars_.erase(name);
    }
    vars_["CONFIG_TYPE"] = "GRPC_XDS_SOTW";
    vars_["CONFIG_GRPC_XDS_SERVER_URL"] = cp.address();
    vars_["CONFIG_GRPC_XDS_NODE_ID"] = "envoy-ratelimit";
    vars_["XDS_CLIENT_BACKOFF_INITIAL_INTERVAL"] = "100ms";
    vars_["XDS_CLIENT_BACKOFF_MAX_INTERVAL"] = "400ms";
    vars_["FORCE_START_WITHOUT_INITIAL_CONFIG"] = "true";
    start_serving(link());
    const auto streams = cp.await_streams(1, 10s);
    ASSERT_EQ(streams.size(), 1u) << process_.log();
    EXPECT_EQ(streams[0].node().id(), "envoy-ratelimit");

    cp.set("v1", {rls_config("erl", {{"user", "", 20}})});
    const auto ack = cp.await_reply(cp.current_nonce(), 10s);
    ASSERT_TRUE(ack && !ack->nack) << process_.log();
    RlsClient client(port("GRPC_PORT"));
    ASSERT_TRUE(wait_until([&] { return served_limit(client, "erl", "probe") == 20; }, 10s)) << process_.log();

    in_one_window(1h, [&](int) {
        redis_.command({"FLUSHALL"});  // the counts of one hour window, from none
        std::atomic<int> admitted{0}, denied{0};
        run_concurrently(8, [&](int) {
            RlsClient own(port("GRPC_PORT"));
            for (int i = 0; i < 6; ++i) {
                const auto code = own.code(rls_request("erl", {Descriptor{{{"user", "bob"}}, std::nullopt}}));
                (code == RlsResponse::OK ? admitted : denied)++;
            }
        });
        EXPECT_EQ(admitted.load(), 20);
        EXPECT_EQ(denied.load(), 28);
        // envoyproxy/ratelimit's key, charged by every call (charge): 48.
        const auto hour = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count() / 3600 * 3600;
        const std::string key = "erl_user_bob_" + std::to_string(hour);
        EXPECT_EQ(redis_.integer({"GET", key}), 48) << "key " << key;
    });
}

// Issue 45 item 6: a misspelt variable is named at start with the name it meant, and Envoy
// Gateway's variables ERL mode does not read are named too; the start goes on.
TEST_F(ErlDeployment, UnknownErlLookingVariablesAreWarnedByNameAtStart) {
    write_file(config_dir() / "rules.yaml", rules("erl", 2));
    vars_["RUNTIME_IGNORE_DOTFILES"] = "true";
    vars_["OTEL_METRICS_EXPORTER"] = "otlp";  // OTEL_EXPORTER_OTLP_* are read now (docs/tracing.md)
    start_serving(link());
    EXPECT_FALSE(process_.wait_for_log(
                             "RUNTIME_IGNORE_DOTFILES is not read in ERL mode; did you mean RUNTIME_IGNOREDOTFILES?",
                             process_start_bound)
                     .empty())
        << process_.log();
    EXPECT_FALSE(process_.wait_for_log("OTEL_METRICS_EXPORTER is not read in ERL mode",
        process_start_bound).empty());
    EXPECT_EQ(process_.log().find("RUNTIME_ROOT is not read"), std::string::npos) << "known names are not warned";
}

TEST_F(ErlDeployment, ShadowModeLetsEveryCallThroughAndStillCounts) {
    write_file(config_dir() / "rules.yaml", rules("erl", 2));
    vars_["SHADOW_MODE"] = "true";
    start_serving(link());
    RlsClient client(port("GRPC_PORT"));
    in_one_window(1h, [&](int) {
        redis_.command({"FLUSHALL"});  // the counts of one hour window, from none
        for (int i = 0; i < 4; ++i) {
            RlsResponse res;
            ASSERT_TRUE(client.call(rls_request("erl", {Descriptor{{{"user", "carol"}}, std::nullopt}}), res).ok());
            EXPECT_EQ(res.overall_code(), RlsResponse::OK) << "call " << i;
            EXPECT_EQ(res.statuses(0).code(), i < 2 ? RlsResponse::OK : RlsResponse::OVER_LIMIT) << "call " << i;
        }
    });
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_mode_test
