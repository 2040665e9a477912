// Quota webhooks in ERL mode: ratelimitd started as Envoy Gateway's managed Deployment starts
// envoyproxy/ratelimit (the `ratelimit` link, only ERL's variables, `env -i`), plus ERL mode's
// own RATELIMITD_ERL_NOTIFY_FILE naming a file with a native config's `notify:` section. Two
// sidecars on one real redis-server, concurrent ShouldRateLimit calls from clients built from
// Envoy's protos, the tests' own receiver: 80 % and 100 % of a domain rule send one signed event
// each, valid against the schema; the check stays one script call; a bad file stops the start.
#include "grpc/erl_mode_fixture.hpp"
#include "support/concurrent_calls.hpp"
#include "support/event_schema.hpp"
#include "support/held_window.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"
#include "support/webhook_event_check.hpp"
#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_erl_notify_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* secret = "erl-webhook-secret-0123456789";

std::string notify_section(const std::string& url, const std::string& secret_text = secret) {
    return "notify:\n  targets:\n    ops: {url: \"" + url + "\", secret: \"" + secret_text +
           "\", timeout: 2s}\n  policies:\n    erl.user: {at: [0.8, 1.0], target: ops}\n";
}

std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Calls of `command` Redis has run so far, scripts' own included (INFO commandstats).
long long command_calls(const RedisServer& redis, const std::string& command) {
    const std::string stats = redis.command({"INFO", "commandstats"});
    const std::string name = "cmdstat_" + command + ":calls=";
    const auto at = stats.find(name);
    return at == std::string::npos ? 0 : std::stoll(stats.substr(at + name.size()));
}

class ErlNotify : public ErlModeTest {
protected:
    void SetUp() override {
        ErlModeTest::SetUp();
        std::ofstream(config_dir() / "rules.yaml")
            << "domain: erl\ndescriptors:\n  - key: user\n    rate_limit: {unit: hour, requests_per_unit: 20}\n";
        vars_["RATELIMITD_ERL_NOTIFY_FILE"] = notify_path().string();
    }
    void TearDown() override {
        second_ = Child();
        ErlModeTest::TearDown();
    }
    fs::path notify_path() const { return dir_ / "notify.yaml"; }
    void write_notify(const std::string& text) const { std::ofstream(notify_path()) << text; }

    /// A second sidecar of the same Deployment: the same variables on listeners of its own.
    unsigned short start_second() {
        auto vars = vars_;
        for (const char* port : {"PORT", "GRPC_PORT", "DEBUG_PORT"}) vars[port] = std::to_string(free_port());
        std::vector<std::string> argv{"/usr/bin/env", "-i"};
        for (const auto& [name, value] : vars) argv.push_back(name + "=" + value);
        argv.push_back((dir_ / "ratelimit").string());
        second_ = Child(argv, (dir_ / "log-second").string());
        EXPECT_FALSE(second_.wait_for_log("grpc listening on", process_start_bound).empty()) << second_.log();
        return static_cast<unsigned short>(std::stoi(vars.at("GRPC_PORT")));
    }

    Child second_;
};

/// The events of `tenant` among `received`, each checked signed and well formed.
std::vector<json> events_of(const std::vector<ReceivedRequest>& received, const std::string& tenant) {
    std::vector<json> out;
    for (const auto& r : received) {
        if (json::parse(r.body)["tenant"] == tenant) out.push_back(verified_event(r, secret, now_s()));
    }
    return out;
}

TEST_F(ErlNotify, TwoSidecarsCrossingEightyAndHundredPercentSendOneSignedEventEach) {
    WebhookReceiver receiver;
    write_notify(notify_section(receiver.url()));
    serve();
    const unsigned short ports[] = {port("GRPC_PORT"), start_second()};
    in_one_window(1h, [&](int attempt) {
        const std::string user = "ann" + std::to_string(attempt);
        std::atomic<int> admitted{0};
        // 8 clients, 4 on each sidecar, 6 calls each: 48 calls on a budget of 20.
        run_concurrently(8, [&](int i) {
            RlsClient own(ports[i % 2]);
            for (int k = 0; k < 6; ++k) {
                if (own.code(rls_request("erl", {Descriptor{{{"user", user}}, std::nullopt}})) == RlsResponse::OK) ++admitted;
            }
        });
        EXPECT_EQ(admitted.load(), 20);
        ASSERT_TRUE(wait_until([&] { return events_of(receiver.requests(), user).size() >= 2; }, 20s));
        // A fresh user past 80 % on each sidecar, queued after every answer there: once both are
        // in, a second event of `user` would be too.
        for (int s = 0; s < 2; ++s) {
            RlsClient late(ports[s]);
            const std::string name = "late" + std::to_string(s) + "-" + user;
            EXPECT_EQ(late.code(rls_request("erl", {Descriptor{{{"user", name}}, 16}})), RlsResponse::OK);
        }
        ASSERT_TRUE(wait_until([&] { return events_of(receiver.requests(), "late1-" + user).size() == 1 &&
                                            events_of(receiver.requests(), "late0-" + user).size() == 1; },
                               20s));
        const auto events = events_of(receiver.requests(), user);
        ASSERT_EQ(events.size(), 2u);
        std::map<double, int> used_at;
        for (const json& e : events) {
            used_at[e["threshold"].get<double>()] = e["used"].get<int>();
            EXPECT_EQ(e["policy"], "erl.user");
            EXPECT_EQ(e["limit"], 20);
            EXPECT_EQ(e["window"]["seconds"], 3600);
            EXPECT_EQ(e["window_start"].get<std::int64_t>() % 3600, 0) << e.dump();
            EXPECT_EQ(e["window_end"].get<std::int64_t>(), e["window_start"].get<std::int64_t>() + 3600);
        }
        // 80 %: the 16th call, whichever sidecar ran it; 100 %: the first denial (the 21st call),
        // whose event says the limit used up.
        EXPECT_EQ(used_at, (std::map<double, int>{{0.8, 16}, {1.0, 20}}));
        EXPECT_NE(events[0]["id"], events[1]["id"]);
    });
    EXPECT_EQ(schema_failures(receiver.requests()), "");
}

// The thresholds are decided in the check's own script: a call that crosses one costs Redis the
// one script call every ERL check costs, and one marker SET inside it.
TEST_F(ErlNotify, ACrossingCallIsStillOneScriptCall) {
    WebhookReceiver receiver;
    write_notify(notify_section(receiver.url()));
    serve();
    const long long scripts = command_calls(redis_, "evalsha") + command_calls(redis_, "eval");
    const long long sets = command_calls(redis_, "set");
    EXPECT_EQ(call("erl", {{{"user", "cal"}}}, {16}).overall_code(), RlsResponse::OK);
    EXPECT_EQ(command_calls(redis_, "evalsha") + command_calls(redis_, "eval") - scripts, 1);
    EXPECT_EQ(command_calls(redis_, "set") - sets, 1) << "the 80 % marker";
    ASSERT_TRUE(wait_until([&] { return receiver.count() == 1; }, 20s));
    EXPECT_EQ(events_of(receiver.requests(), "cal").size(), 1u);
}

// SIGHUP reloads the file with the runtime directory; a bad one is refused and the one in force
// stays.
TEST_F(ErlNotify, SighupRereadsTheFileAndABadOneLeavesTheThresholdsInForce) {
    WebhookReceiver receiver;
    write_notify(notify_section(receiver.url()));
    serve();
    std::string section = notify_section(receiver.url());
    section.replace(section.find("[0.8, 1.0]"), 10, "[0.5]");
    write_notify(section);
    process_.signal(SIGHUP);
    ASSERT_FALSE(process_.wait_for_log("reloaded ", process_start_bound).empty()) << process_.log();
    EXPECT_EQ(call("erl", {{{"user", "half"}}}, {11}).overall_code(), RlsResponse::OK);
    ASSERT_TRUE(wait_until([&] { return receiver.count() == 1; }, 20s));
    ASSERT_EQ(events_of(receiver.requests(), "half").size(), 1u);
    EXPECT_EQ(events_of(receiver.requests(), "half")[0]["threshold"], 0.5);

    write_notify(notify_section(receiver.url(), "tiny-secret"));
    process_.signal(SIGHUP);
    ASSERT_FALSE(process_.wait_for_log("reload refused", process_start_bound).empty()) << process_.log();
    EXPECT_NE(process_.log().find("notify.targets.ops.secret: expected at least 16 bytes, got 11"), std::string::npos)
        << process_.log();
    EXPECT_EQ(call("erl", {{{"user", "still"}}}, {11}).overall_code(), RlsResponse::OK);
    ASSERT_TRUE(wait_until([&] { return receiver.count() == 2; }, 20s));
    ASSERT_EQ(events_of(receiver.requests(), "still").size(), 1u);
    EXPECT_EQ(events_of(receiver.requests(), "still")[0]["threshold"], 0.5) << "the file in force before";
}

TEST_F(ErlNotify, ABadFileStopsTheStartNamingTheFileAndWhatIsWrongButNoSecret) {
    write_notify(notify_section("http://127.0.0.1:9/hook", "tiny-secret"));
    expect_refused("RATELIMITD_ERL_NOTIFY_FILE \"" + notify_path().string() +
                   "\": notify.targets.ops.secret: expected at least 16 bytes, got 11");
    EXPECT_EQ(process_.log().find("tiny-secret"), std::string::npos) << process_.log();
    fs::remove(notify_path());
    expect_refused("RATELIMITD_ERL_NOTIFY_FILE: " + notify_path().string() + ": cannot read: No such file or directory");
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_notify_test
