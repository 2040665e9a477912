// The denial cache stays exact in a fleet: three sidecars on one real Redis, each with its
// own cache. A reload that changes a policy's numbers, an admin reset on any sidecar, and a
// check in flight while a reset happens never leave a stale cached denial.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/sentinel.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <future>
#include <sstream>

namespace ratelimitd::test::denial_cache_fleet_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string admin_token = "denial-cache-fleet-token";

std::string config_with_limit(int limit) {
    return "policies:\n  fw:\n    algorithm: fixed_window\n    limit: " + std::to_string(limit) +
           "\n    window: 600s\n  tb:\n    algorithm: token_bucket\n    limit: " + std::to_string(limit) +
           "\n    window: 600s\n";
}

struct Fleet {
    RedisServer redis;
    std::vector<std::unique_ptr<Ratelimitd>> sidecars;

    Fleet() {
        for (int i = 0; i < 3; ++i) {
            sidecars.push_back(std::make_unique<Ratelimitd>(config_with_limit(3), redis.url(), std::vector<std::string>{"--store-timeout", "5s"},
                                                            std::vector<std::string>{"RATELIMITD_ADMIN_TOKEN=" + admin_token}));
        }
        // Every sidecar listens on the reset channel before the test resets anything.
        EXPECT_TRUE(wait_until([&] { return redis.command({"PUBSUB", "NUMSUB", "rl:resets"}) == "rl:resets 3"; },
            process_start_bound))
            << redis.command({"PUBSUB", "NUMSUB", "rl:resets"});
    }
    int check(size_t sidecar, const std::string& policy, const std::string& tenant) const {
        HttpClient c(sidecars[sidecar]->port());
        return c.post("/v1/check", json{{"policy", policy}, {"tenant", tenant}}.dump()).status;
    }
    /// Uses up the key through sidecar 0, then has every sidecar cache its denial.
    void exhaust_and_cache_everywhere(const std::string& policy, const std::string& tenant, int limit) const {
        for (int i = 0; i < limit; ++i) ASSERT_EQ(check(0, policy, tenant), 200);
        for (size_t s = 0; s < sidecars.size(); ++s) {
            for (int i = 0; i < 2; ++i) ASSERT_EQ(check(s, policy, tenant), 429) << "sidecar " << s;
        }
    }
};

TEST(DenialCacheFleet, AReloadThatRaisesTheLimitIsAnsweredFromTheNewNumbersOnEverySidecar) {
    Fleet fleet;
    for (const std::string policy : {"fw", "tb"}) fleet.exhaust_and_cache_everywhere(policy, "raised", 3);
    for (auto& s : fleet.sidecars) {
        s->write_config(config_with_limit(6));
        s->process().signal(SIGHUP);
        ASSERT_FALSE(s->process().wait_for_log("reloaded", process_start_bound).empty());
    }
    for (const std::string policy : {"fw", "tb"}) {
        // Three more units fit in the window now, spread over the fleet, and not one more.
        int admitted = 0;
        for (int round = 0; round < 3; ++round) {
            for (size_t s = 0; s < fleet.sidecars.size(); ++s) {
                HttpClient c(fleet.sidecars[s]->port());
                auto r = c.post("/v1/check", json{{"policy", policy}, {"tenant", "raised"}}.dump());
                EXPECT_EQ(r.header("x-ratelimit-limit"), "6") << policy << " sidecar " << s;
                admitted += r.status == 200;
            }
        }
        EXPECT_EQ(admitted, 3) << policy;
    }
}

TEST(DenialCacheFleet, AResetOnOneSidecarReachesEveryOtherWithin100ms) {
    Fleet fleet;
    for (const std::string policy : {"fw", "tb"}) {
        fleet.exhaust_and_cache_everywhere(policy, "support-case", 3);
        HttpClient admin(fleet.sidecars[2]->port());
        auto reset = admin.post("/v1/reset", json{{"policy", policy}, {"tenant", "support-case"}}.dump(),
                                {{"Authorization", "Bearer " + admin_token}});
        ASSERT_EQ(reset.status, 200) << reset.body;
        const auto reset_at = std::chrono::steady_clock::now();
        for (size_t s = 0; s < 2; ++s) {
            // A cached denial answers 429 without charging; the first 200 is the store's.
            EXPECT_TRUE(wait_until([&] { return fleet.check(s, policy, "support-case") == 200; }, 100ms, 2ms))
                << policy << ": sidecar " << s << " still denies from its cache";
        }
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - reset_at);
        EXPECT_LE(took.count(), 100) << policy;
        EXPECT_EQ(fleet.check(2, policy, "support-case"), 200) << "the third unit of the fresh window";
        EXPECT_EQ(fleet.check(2, policy, "support-case"), 429);
    }
}

TEST(DenialCacheFleet, ADenialInFlightWhileAResetHappensIsNotCached) {
    Fleet fleet;
    // Denied in the store, never asked of sidecar 0: its next check goes to Redis.
    for (int i = 0; i < 3; ++i) ASSERT_EQ(fleet.check(1, "fw", "in-flight"), 200);
    ASSERT_EQ(fleet.check(1, "fw", "in-flight"), 429);

    // Redis holds every write (scripts included) while paused: sidecar 0's check waits in
    // Redis, the reset is sent behind it, and the check's denial comes back after the reset.
    fleet.redis.command({"CLIENT", "PAUSE", "3000", "WRITE"});
    auto in_flight = std::async(std::launch::async, [&] { return fleet.check(0, "fw", "in-flight"); });
    const auto held = [&](const std::string& cmd) {  // a client blocked by the pause on `cmd`
        std::istringstream clients(fleet.redis.command({"CLIENT", "LIST"}));
        for (std::string word, flags; clients >> word;) {
            if (word.starts_with("flags=")) flags = word;
            if (word == "cmd=" + cmd && flags.find('b') != std::string::npos) return true;
        }
        return false;
    };
    ASSERT_TRUE(wait_until([&] { return held("evalsha"); }, process_start_bound)) << "the check reached Redis";
    auto reset = std::async(std::launch::async, [&] {
        HttpClient admin(fleet.sidecars[0]->port());
        return admin.post("/v1/reset", json{{"policy", "fw"}, {"tenant", "in-flight"}}.dump(),
                          {{"Authorization", "Bearer " + admin_token}}).status;
    });
    ASSERT_TRUE(wait_until([&] { return held("del"); }, process_start_bound)) << "the reset reached Redis";
    fleet.redis.command({"CLIENT", "UNPAUSE"});
    EXPECT_EQ(in_flight.get(), 429) << "decided before the reset";
    EXPECT_EQ(reset.get(), 200);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(fleet.check(0, "fw", "in-flight"), 200) << "a fresh window after the reset";
    EXPECT_EQ(fleet.check(0, "fw", "in-flight"), 429);
}

TEST(DenialCacheFleet, OnAClusterAResetReachesEverySidecarToo) {
    // Each sidecar listens on one node; cluster pub/sub carries the message to every node.
    RedisCluster cluster(3);
    std::vector<std::unique_ptr<Ratelimitd>> sidecars;
    for (int i = 0; i < 3; ++i) {
        sidecars.push_back(std::make_unique<Ratelimitd>(config_with_limit(3), cluster.url(),
                                                        std::vector<std::string>{"--store-timeout", "2s"},
                                                        std::vector<std::string>{"RATELIMITD_ADMIN_TOKEN=" + admin_token}));
    }
    const auto listening = [&] {
        long long n = 0;
        for (int node = 0; node < cluster.size(); ++node) {
            const std::string reply = cluster.command(node, {"PUBSUB", "NUMSUB", "rl:resets"});
            n += std::stoll(reply.substr(reply.rfind(' ') + 1));
        }
        return n == 3;
    };
    ASSERT_TRUE(wait_until(listening, process_start_bound));
    const auto check = [&](size_t s) {
        HttpClient c(sidecars[s]->port());
        return c.post("/v1/check", json{{"policy", "fw"}, {"tenant", "on-cluster"}}.dump()).status;
    };
    for (int i = 0; i < 3; ++i) ASSERT_EQ(check(0), 200);
    for (size_t s = 0; s < 3; ++s) ASSERT_EQ(check(s), 429);
    HttpClient admin(sidecars[2]->port());
    ASSERT_EQ(admin.post("/v1/reset", json{{"policy", "fw"}, {"tenant", "on-cluster"}}.dump(),
                         {{"Authorization", "Bearer " + admin_token}}).status, 200);
    for (size_t s = 0; s < 2; ++s) {
        EXPECT_TRUE(wait_until([&] { return check(s) == 200; }, 100ms, 2ms)) << "sidecar " << s;
    }
}

TEST(DenialCacheFleet, BehindSentinelTheSubscriptionIsOnTheCurrentPrimary) {
    RedisServer primary;
    RedisSentinel sentinel("m", primary.port());
    std::vector<std::unique_ptr<Ratelimitd>> sidecars;
    for (int i = 0; i < 3; ++i) {
        sidecars.push_back(std::make_unique<Ratelimitd>(config_with_limit(3), sentinel.url(),
                                                        std::vector<std::string>{"--store-timeout", "2s"},
                                                        std::vector<std::string>{"RATELIMITD_ADMIN_TOKEN=" + admin_token}));
    }
    ASSERT_TRUE(wait_until([&] { return primary.command({"PUBSUB", "NUMSUB", "rl:resets"}) == "rl:resets 3"; },
        process_start_bound));
    const auto check = [&](size_t s) {
        HttpClient c(sidecars[s]->port());
        return c.post("/v1/check", json{{"policy", "fw"}, {"tenant", "behind-sentinel"}}.dump()).status;
    };
    for (int i = 0; i < 3; ++i) ASSERT_EQ(check(0), 200);
    for (size_t s = 0; s < 3; ++s) ASSERT_EQ(check(s), 429);
    HttpClient admin(sidecars[2]->port());
    ASSERT_EQ(admin.post("/v1/reset", json{{"policy", "fw"}, {"tenant", "behind-sentinel"}}.dump(),
                         {{"Authorization", "Bearer " + admin_token}}).status, 200);
    for (size_t s = 0; s < 2; ++s) {
        EXPECT_TRUE(wait_until([&] { return check(s) == 200; }, 100ms, 2ms)) << "sidecar " << s;
    }
}

}  // namespace
}  // namespace ratelimitd::test::denial_cache_fleet_test
