// Richer policies against the real binary, on Redis and on the embedded store: multi-window
// policies (all-or-nothing under concurrency, exact headers, hash-tagged keys), plans and
// tenant overrides (a plan switch starts from fresh counts), and shadow mode (never denies,
// counted).
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <thread>

namespace ratelimitd::test::policies_test {
namespace {

using json = nlohmann::json;

// Multi-window policies of every algorithm: the short window allows 10, the long one 15.
std::string windows_of(const char* name, const char* algorithm) {
    return std::string("  ") + name + ":\n    algorithm: " + algorithm +
           "\n    windows:\n      - { limit: 10, window: 1h }\n      - { limit: 15, window: 1d }\n";
}

std::string config() {
    std::string text = R"(
prefix: rl
policies:
  tiered:
    algorithm: fixed_window
    windows:
      - { limit: 10, window: 1s, name: tiered-short }
      - { limit: 15, window: 1h }
  tiered-log:
    algorithm: sliding_log
    windows:
      - { limit: 10, window: 1s, name: tiered-log-short }
      - { limit: 15, window: 1h }
  headers:
    algorithm: fixed_window
    windows:
      - { limit: 10, window: 1m }
      - { limit: 15, window: 1d, name: headers-daily }
  planned: { algorithm: fixed_window, limit: 3, window: 1h }
  shadowed: { algorithm: fixed_window, limit: 3, window: 1h, shadow: true }
  enforced: { algorithm: fixed_window, limit: 5, window: 1h }
)";
    for (const char* alg : {"token_bucket", "sliding_log", "fixed_window", "gcra", "sliding_window"}) {
        text += windows_of((std::string("w-") + alg).c_str(), alg);
    }
    text += R"(
plans:
  free:
    planned: { limit: 2, window: 1h }
  pro:
    planned: { limit: 5, window: 1h }
tenants:
  on-free: { plan: free }
  special: { plan: pro, overrides: { planned: { limit: 7, window: 1h } } }
routes:
  - { path: /layered, limits: [ { policy: enforced }, { policy: shadowed } ] }
)";
    return text;
}

/// One ratelimitd per store, shared by the tests of that store; each test uses its own tenants.
struct Deployment {
    std::unique_ptr<RedisServer> redis;  // null for the embedded store
    std::unique_ptr<Ratelimitd> server;
};

Deployment& deployment(const std::string& store) {
    static std::map<std::string, Deployment> all;
    auto& d = all[store];
    if (!d.server) {
        if (store == "redis") d.redis = std::make_unique<RedisServer>();
        d.server = std::make_unique<Ratelimitd>(config(), d.redis ? d.redis->url() : "");
    }
    return d;
}

HttpResponse check(HttpClient& c, const json& body) { return c.post("/v1/check", body.dump()); }

class Policies : public ::testing::TestWithParam<std::string> {
protected:
    unsigned short port() { return deployment(GetParam()).server->port(); }
    RedisServer* redis() { return deployment(GetParam()).redis.get(); }
    /// A tenant of its own for each test and store, so tests never share counters.
    std::string tenant(const std::string& name) { return name + "-" + GetParam(); }
};

// --- multi-window ----------------------------------------------------------------------------

class MultiWindow : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(MultiWindow, ADenialByOneWindowChargesNoOther) {
    const auto& [store, algorithm] = GetParam();
    const std::string policy = "w-" + algorithm;
    const unsigned short port = deployment(store).server->port();
    auto tally = fire(port, 30, 10, [&](HttpClient& c) {
        return check(c, {{"policy", policy}, {"tenant", "all-or-nothing"}});
    });
    EXPECT_EQ(tally.allowed, 10);
    EXPECT_EQ(tally.denied, 20);
    EXPECT_EQ(tally.other, 0);
    // The 20 denials, refused by the 10-per-hour window, left the day window at 15 - 10.
    HttpClient c(port);
    const auto res = check(c, {{"policy", policy}, {"tenant", "all-or-nothing"}});
    ASSERT_EQ(res.status, 429);
    const auto body = json::parse(res.body);
    ASSERT_EQ(body["windows"].size(), 2u);
    EXPECT_EQ(body["windows"][0]["remaining"], 0);
    EXPECT_EQ(body["windows"][1]["remaining"], 5);
    EXPECT_EQ(body["limit"], 10) << "the window that denied is reported";
}

INSTANTIATE_TEST_SUITE_P(StoresAndAlgorithms, MultiWindow,
                         ::testing::Combine(::testing::Values("redis", "embedded"),
                                            ::testing::Values("token_bucket", "sliding_log", "fixed_window",
                                                              "gcra", "sliding_window")),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

// The hour window (15) is spent in bursts the 1 s window (10) lets through. Then every check is
// denied by the hour window, and a denied check reports the short window without charging it:
// once that window is whole again, 30 concurrent denials leave it whole. If denials charged it,
// no check could ever see it whole (each one would spend a unit of it).
TEST_P(Policies, WhenTheLongWindowDeniesTheShortOneIsNotCharged) {
    using namespace std::chrono_literals;
    for (const char* policy : {"tiered", "tiered-log"}) {
        SCOPED_TRACE(policy);
        const std::string who = tenant(std::string("day-denies-") + policy);
        const auto one_check = [&](HttpClient& c) { return check(c, {{"policy", policy}, {"tenant", who}}); };
        int admitted = 0;
        ASSERT_TRUE(wait_until([&] { return (admitted += fire(port(), 30, 10, one_check).allowed) >= 15; }, 20s));
        EXPECT_EQ(admitted, 15) << "the hour window admits exactly its limit";
        HttpClient c(port());
        const auto short_window_whole = [&] {
            const auto res = one_check(c);
            return res.status == 429 && json::parse(res.body)["windows"][0]["remaining"] == 10;
        };
        ASSERT_TRUE(wait_until(short_window_whole, process_start_bound)) << "a denied check charged the short window";
        auto denied = fire(port(), 30, 10, one_check);
        EXPECT_EQ(denied.allowed, 0);
        EXPECT_EQ(denied.denied, 30);
        const auto res = one_check(c);
        ASSERT_EQ(res.status, 429);
        const auto body = json::parse(res.body);
        EXPECT_EQ(body["windows"][1]["remaining"], 0);
        EXPECT_EQ(body["windows"][0]["remaining"], 10) << "the 31 denials charged the short window nothing";
        EXPECT_EQ(res.header("x-ratelimit-limit"), "15") << "the hour window denied, so it is reported";
    }
}

TEST_P(Policies, MultiWindowHeadersListEveryWindow) {
    HttpClient c(port());
    const auto res = check(c, {{"policy", "headers"}, {"tenant", tenant("headers")}});
    ASSERT_EQ(res.status, 200);
    // A fresh fixed window resets one whole window from now: t is the window, exactly.
    EXPECT_EQ(res.header("ratelimit-policy"), R"("headers-1m";q=10;w=60, "headers-daily";q=15;w=86400)");
    EXPECT_EQ(res.header("ratelimit"), R"("headers-1m";r=9;t=60, "headers-daily";r=14;t=86400)");
    EXPECT_EQ(res.header("x-ratelimit-limit"), "10") << "allowed: the window with the least remaining";
    EXPECT_EQ(res.header("x-ratelimit-remaining"), "9");
    const auto body = json::parse(res.body);
    EXPECT_EQ(body["policy"], "headers");
    EXPECT_EQ(body["windows"][0]["policy"], "headers-1m");
    EXPECT_EQ(body["windows"][1]["policy"], "headers-daily");
    EXPECT_EQ(body["windows"][1]["window"], 86400);
    // 9 more use up the minute window: the denial names it and waits for it.
    for (int i = 0; i < 9; ++i) ASSERT_EQ(check(c, {{"policy", "headers"}, {"tenant", tenant("headers")}}).status, 200);
    const auto denied = check(c, {{"policy", "headers"}, {"tenant", tenant("headers")}});
    ASSERT_EQ(denied.status, 429);
    const std::string retry = denied.header("retry-after");
    EXPECT_GE(std::stoi(retry), 59);
    EXPECT_LE(std::stoi(retry), 60);
    EXPECT_EQ(denied.header("ratelimit"), R"("headers-1m";r=0;t=)" + retry + R"(, "headers-daily";r=5;t=86400)");
}

TEST(PoliciesOnRedis, WindowKeysShareOneHashTagAndExpireWithTheirSpan) {
    RedisServer* redis = deployment("redis").redis.get();
    HttpClient c(deployment("redis").server->port());
    ASSERT_EQ(check(c, {{"policy", "headers"}, {"tenant", "tagged"}, {"scope", "POST_/x"}}).status, 200);
    const std::string minute = "rl:headers:{tagged:POST_/x}:1m";
    const std::string day = "rl:headers:{tagged:POST_/x}:1d";
    const long long minute_ttl = std::stoll(redis->command({"PTTL", minute}));
    const long long day_ttl = std::stoll(redis->command({"PTTL", day}));
    EXPECT_GT(minute_ttl, 0);
    EXPECT_LE(minute_ttl, 60'000);
    EXPECT_GT(day_ttl, 60'000);
    EXPECT_LE(day_ttl, 86'400'000);
    // Redis Cluster hashes only the tag: both keys live in one slot, as one script needs.
    // (CLUSTER KEYSLOT needs cluster mode; the tag is what the slot is computed from.)
    EXPECT_NE(minute.find("{tagged:POST_/x}"), std::string::npos);
}

// --- plans and overrides ---------------------------------------------------------------------

TEST_P(Policies, APlanSwitchStartsFromFreshCountsUnderTheNewLimit) {
    const std::string who = tenant("switcher");
    auto on_free = fire(port(), 10, 5, [&](HttpClient& c) {
        return check(c, {{"policy", "planned"}, {"tenant", who}, {"plan", "free"}});
    });
    EXPECT_EQ(on_free.allowed, 2);
    // Upgraded: the pro limit applies, and the free plan's used-up count does not follow.
    auto on_pro = fire(port(), 10, 5, [&](HttpClient& c) {
        return check(c, {{"policy", "planned"}, {"tenant", who}, {"plan", "pro"}});
    });
    EXPECT_EQ(on_pro.allowed, 5);
    // No plan given and none in the registry for this tenant: the policy's own limit.
    auto own = fire(port(), 10, 5, [&](HttpClient& c) { return check(c, {{"policy", "planned"}, {"tenant", who}}); });
    EXPECT_EQ(own.allowed, 3);
    if (redis() != nullptr) {
        EXPECT_EQ(redis()->command({"GET", "rl:planned@free:" + who + ":global"}), "2");
        EXPECT_EQ(redis()->command({"GET", "rl:planned@pro:" + who + ":global"}), "5");
        EXPECT_EQ(redis()->command({"GET", "rl:planned:" + who + ":global"}), "3");
    }
}

TEST_P(Policies, TheRegistryNamesPlansAndOverridesForTenants) {
    // on-free is on the free plan in the registry; special has its own override.
    auto free_plan = fire(port(), 10, 5, [&](HttpClient& c) { return check(c, {{"policy", "planned"}, {"tenant", "on-free"}, {"scope", GetParam()}}); });
    EXPECT_EQ(free_plan.allowed, 2);
    auto special = fire(port(), 10, 5, [&](HttpClient& c) { return check(c, {{"policy", "planned"}, {"tenant", "special"}, {"scope", GetParam()}}); });
    EXPECT_EQ(special.allowed, 7) << "a tenant's override wins over its plan";
    // A caller that knows the plan wins over the registry's map (not over an override).
    auto told = fire(port(), 10, 5, [&](HttpClient& c) {
        return check(c, {{"policy", "planned"}, {"tenant", "on-free"}, {"scope", GetParam() + "-told"}, {"plan", "pro"}});
    });
    EXPECT_EQ(told.allowed, 5);
    HttpClient c(port());
    const auto res = check(c, {{"policy", "planned"}, {"tenant", "special"}, {"scope", GetParam()}});
    EXPECT_EQ(res.header("x-ratelimit-limit"), "7");
    EXPECT_EQ(res.header("ratelimit-policy"), R"("planned";q=7;w=3600)");
}

TEST(PolicyReload, MovingATenantToAnotherPlanTakesEffectOnSighup) {
    const std::string base = "policies:\n  api: { algorithm: fixed_window, limit: 3, window: 1h }\n"
                             "plans:\n  free:\n    api: { limit: 2, window: 1h }\n  pro:\n    api: { limit: 5, window: 1h }\n";
    RedisServer redis;
    Ratelimitd server(base + "tenants:\n  mover: { plan: free }\n", redis.url());
    const auto send = [](HttpClient& c) { return check(c, {{"policy", "api"}, {"tenant", "mover"}}); };
    EXPECT_EQ(fire(server.port(), 10, 5, send).allowed, 2);
    server.write_config(base + "tenants:\n  mover: { plan: pro }\n");
    server.process().signal(SIGHUP);
    ASSERT_FALSE(server.process().wait_for_log("reloaded", process_start_bound).empty());
    EXPECT_EQ(fire(server.port(), 10, 5, send).allowed, 5) << "the pro limit, from fresh counts";
    EXPECT_EQ(redis.command({"GET", "rl:api@free:mover:global"}), "2") << "the free plan's key is left to expire";
}

TEST_P(Policies, AnUnknownPlanIsAClientErrorAndChangesNothing) {
    HttpClient c(port());
    const auto res = check(c, {{"policy", "planned"}, {"tenant", tenant("unknown-plan")}, {"plan", "gold"}});
    EXPECT_EQ(res.status, 400);
    const auto body = json::parse(res.body);
    EXPECT_EQ(body["error"], "unknown_plan");
    EXPECT_EQ(body["detail"], R"(plan: "gold" is not defined (known: free, pro))");
    const auto bad = check(c, {{"policy", "planned"}, {"tenant", tenant("unknown-plan")}, {"plan", "a b"}});
    EXPECT_EQ(bad.status, 400);
    EXPECT_EQ(json::parse(bad.body)["error"], "invalid_request");
    const auto typed = check(c, {{"policy", "planned"}, {"tenant", tenant("unknown-plan")}, {"plan", 3}});
    EXPECT_EQ(typed.status, 400);
    // Nothing was charged: the full limit is still there.
    auto after = fire(port(), 5, 5, [&](HttpClient& h) {
        return check(h, {{"policy", "planned"}, {"tenant", tenant("unknown-plan")}});
    });
    EXPECT_EQ(after.allowed, 3);
}

// --- shadow mode -----------------------------------------------------------------------------

TEST_P(Policies, AShadowPolicyNeverDeniesButCountsWouldBeDenials) {
    HttpClient c(port());
    const std::string series = R"(ratelimitd_checks_total{policy="shadowed",verdict="shadow_denied"})";
    const double before = std::max(0.0, sample(c.get("/metrics").body, series));
    std::atomic<int> flagged{0};
    auto tally = fire(port(), 10, 5, [&](HttpClient& h) {
        auto res = check(h, {{"policy", "shadowed"}, {"tenant", tenant("shadow")}});
        if (res.header("x-ratelimit-shadow") == "deny") {
            ++flagged;
            EXPECT_EQ(json::parse(res.body)["shadow_denied"], true);
            EXPECT_EQ(json::parse(res.body)["allowed"], true);
            EXPECT_EQ(res.header("x-ratelimit-remaining"), "0");
            EXPECT_EQ(res.header("retry-after"), "");
        }
        return res;
    });
    EXPECT_EQ(tally.allowed, 10);
    EXPECT_EQ(tally.denied, 0);
    EXPECT_EQ(flagged.load(), 7) << "the limit is 3: the other 7 would have been denied";
    EXPECT_EQ(sample(c.get("/metrics").body, series) - before, 7);
    // Logged as access lines although access_log is off by default.
    const std::string line = deployment(GetParam()).server->process().wait_for_log(
        "tenant=" + tenant("shadow") + " scope=global verdict=shadow_denied status=200", process_start_bound);
    EXPECT_NE(line, "") << "no access line for a shadow denial";
}

TEST_P(Policies, AShadowLayerNeverKeepsTheEnforcedOneFromCounting) {
    // Route /layered: enforced (limit 5) and shadowed (limit 3) on the same tenant.
    std::atomic<int> flagged{0};
    auto tally = fire(port(), 10, 5, [&](HttpClient& h) {
        auto res = check(h, {{"tenant", tenant("layered")}, {"path", "/layered"}});
        if (res.header("x-ratelimit-shadow") == "deny") ++flagged;
        return res;
    });
    EXPECT_EQ(tally.allowed, 5) << "only the enforced limit denies";
    EXPECT_EQ(tally.denied, 5);
    EXPECT_EQ(flagged.load(), 2) << "of the 5 admitted, the shadow limit would have denied 2";
}

INSTANTIATE_TEST_SUITE_P(Stores, Policies, ::testing::Values("redis", "embedded"));

}  // namespace
}  // namespace ratelimitd::test::policies_test
