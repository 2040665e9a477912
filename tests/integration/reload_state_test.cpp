// A reload that changes a policy's algorithm or numbers keeps its keys answerable: through
// the real binary and a real Redis, every check after the reload is decided from the new
// numbers, never with a store error, and never admits more than the new limit.
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <thread>

namespace ratelimitd::test::reload_state_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// A loaded 2-core machine may take longer than the default 50 ms store deadline; a check
// that timed out may still have been charged, and these tests count exactly.
const std::vector<std::string> slow_machine{"--store-timeout", "2s"};

const std::vector<std::string> algorithms{"token_bucket", "sliding_log", "fixed_window", "gcra", "sliding_window"};

struct PolicySpec {
    std::string name, algorithm;
    int limit = 5;
    std::string window = "600s";
};

std::string config_of(const std::vector<PolicySpec>& policies) {
    // A store error denies: a broken key shows up as too few admitted, never as too many.
    std::string out = "policies:\n";
    for (const auto& p : policies) {
        out += "  " + p.name + ":\n    algorithm: " + p.algorithm + "\n    limit: " + std::to_string(p.limit) +
               "\n    window: " + p.window + "\n    on_store_error: deny\n";
    }
    return out;
}

/// Rewrites the config and waits until the sidecar has reloaded it.
void reload(Ratelimitd& sidecar, const std::string& config) {
    HttpClient c(sidecar.port());
    const auto reloads = [&] {
        return sample(c.get("/metrics").body, "ratelimitd_reloads_total{result=\"success\"}");
    };
    const double before = reloads();
    sidecar.write_config(config);
    sidecar.process().signal(SIGHUP);
    ASSERT_TRUE(wait_until([&] { return reloads() > before; }, process_start_bound)) << "the reload was taken";
}

/// Fires `total` checks of cost 1 from four clients at once; returns {admitted, denied, other}.
std::array<int, 3> fire(const Ratelimitd& sidecar, const std::string& policy, const std::string& tenant, int total) {
    std::atomic<int> next{0}, admitted{0}, denied{0}, other{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 4; ++c) {
        clients.emplace_back([&] {
            HttpClient client(sidecar.port());
            while (next.fetch_add(1) < total) {
                auto r = client.post("/v1/check", json{{"policy", policy}, {"tenant", tenant}}.dump());
                (r.status == 200 ? admitted : r.status == 429 ? denied : other)++;
            }
        });
    }
    for (auto& t : clients) t.join();
    return {admitted.load(), denied.load(), other.load()};
}

std::vector<PolicySpec> shifted(int shift) {  // policy p<i> runs algorithm i + shift
    std::vector<PolicySpec> out;
    for (int i = 0; i < 5; ++i) out.push_back({"p" + std::to_string(i), algorithms[static_cast<size_t>((i + shift) % 5)]});
    return out;
}

TEST(ReloadState, AnAlgorithmChangeFromEachToEachOtherAnswersFromTheNewPolicy) {
    RedisServer redis;
    Ratelimitd sidecar(config_of(shifted(0)), redis.url(), slow_machine);
    for (int shift = 1; shift < 5; ++shift) {
        const std::string tenant = "shift-" + std::to_string(shift);
        for (int i = 0; i < 5; ++i) {
            const auto used = fire(sidecar, "p" + std::to_string(i), tenant, 8);
            ASSERT_EQ(used[0], 5) << "p" << i << " before the reload";
        }
        reload(sidecar, config_of(shifted(shift)));
        for (int i = 0; i < 5; ++i) {
            const auto& from = algorithms[static_cast<size_t>(i)];
            const auto& to = algorithms[static_cast<size_t>((i + shift) % 5)];
            // The old algorithm's state is not the new one's: the tenant starts afresh under the
            // new policy, and gets exactly its limit.
            const auto after = fire(sidecar, "p" + std::to_string(i), tenant, 12);
            EXPECT_EQ(after[0], 5) << from << " -> " << to;
            EXPECT_EQ(after[1], 7) << from << " -> " << to;
            EXPECT_EQ(after[2], 0) << from << " -> " << to;
        }
        reload(sidecar, config_of(shifted(0)));
    }
    EXPECT_EQ(sidecar.process().log().find("WRONGTYPE"), std::string::npos);
}

TEST(ReloadState, AShortenedFixedWindowEndsWithinTheNewWindow) {
    RedisServer redis;
    Ratelimitd sidecar(config_of({{"fw", "fixed_window", 5, "600s"}}), redis.url(), slow_machine);
    ASSERT_EQ(fire(sidecar, "fw", "t", 8)[0], 5);
    reload(sidecar, config_of({{"fw", "fixed_window", 5, "1s"}}));
    HttpClient c(sidecar.port());
    auto denied = c.post("/v1/check", json{{"policy", "fw"}, {"tenant", "t"}}.dump());
    EXPECT_EQ(denied.status, 429) << "the count carries over";
    EXPECT_LE(std::stoi(denied.header("retry-after")), 1);
    EXPECT_LE(redis.integer({"PTTL", "rl:fw:t:global"}), 1000);
    ASSERT_TRUE(wait_until([&] { return redis.integer({"EXISTS", "rl:fw:t:global"}) == 0; }, process_start_bound))
        << "the old window ends within the new one";
    const auto fresh = fire(sidecar, "fw", "t", 12);
    EXPECT_EQ(fresh[0], 5);
    EXPECT_EQ(fresh[2], 0);
}

struct WindowChange {
    const char* algorithm;
    const char* to_window;
};

class ReloadChangesTheWindow : public ::testing::TestWithParam<WindowChange> {};

TEST_P(ReloadChangesTheWindow, TheTokensLeftStayTheTokensLeft) {
    const auto [algorithm, to_window] = GetParam();
    RedisServer redis;
    Ratelimitd sidecar(config_of({{"p", algorithm, 5, "600s"}}), redis.url(), slow_machine);
    ASSERT_EQ(fire(sidecar, "p", "t", 3)[0], 3);  // two of five left
    reload(sidecar, config_of({{"p", algorithm, 5, to_window}}));
    const auto after = fire(sidecar, "p", "t", 10);
    EXPECT_EQ(after[0], 2) << algorithm << " 600s -> " << to_window;
    EXPECT_EQ(after[2], 0);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ReloadChangesTheWindow,
                         ::testing::Values(WindowChange{"token_bucket", "300s"}, WindowChange{"token_bucket", "1200s"},
                                           WindowChange{"gcra", "300s"}, WindowChange{"gcra", "1200s"},
                                           WindowChange{"sliding_window", "300s"},
                                           WindowChange{"sliding_window", "1200s"}),
                         [](const auto& info) {
                             return std::string(info.param.algorithm) + "_to_" + info.param.to_window;
                         });

TEST(ReloadState, ALoweredLimitAppliesToWhatWasAlreadyAdmitted) {
    RedisServer redis;
    std::vector<PolicySpec> before, after;
    for (const auto& a : algorithms) {
        before.push_back({a, a, 5, "600s"});
        after.push_back({a, a, 3, "600s"});
    }
    Ratelimitd sidecar(config_of(before), redis.url(), slow_machine);
    for (const auto& a : algorithms) ASSERT_EQ(fire(sidecar, a, "t", 2)[0], 2);
    reload(sidecar, config_of(after));
    for (const auto& a : algorithms) {
        const auto left = fire(sidecar, a, "t", 6);
        EXPECT_EQ(left[0], 1) << a << ": 2 of the new 3 were used";
        EXPECT_EQ(left[2], 0) << a;
    }
    // Below what was used: nothing is left, and nothing is reported below zero.
    std::vector<PolicySpec> lowest;
    for (const auto& a : algorithms) lowest.push_back({a, a, 1, "600s"});
    reload(sidecar, config_of(lowest));
    HttpClient c(sidecar.port());
    for (const auto& a : algorithms) {
        auto r = c.post("/v1/check", json{{"policy", a}, {"tenant", "t"}}.dump());
        EXPECT_EQ(r.status, 429) << a;
        EXPECT_EQ(r.header("x-ratelimit-remaining"), "0") << a;
    }
}

}  // namespace
}  // namespace ratelimitd::test::reload_state_test
