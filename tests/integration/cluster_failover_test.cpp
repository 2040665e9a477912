// Redis Cluster failover and AUTH against real servers behind the real binary.
//
// Failover: 3 primaries with a replica each (cluster-node-timeout 1 s). One primary is
// SIGKILLed; until its replica is promoted, checks on its slots answer by on_store_error at once
// (allow: 200 + X-RateLimit-Degraded; deny: 503); checks on the other primaries keep being
// decided by Redis throughout. Run twice: with cluster-require-full-coverage yes, where every
// node answers CLUSTERDOWN while the dead primary's slots are uncovered and the store retries
// within a store timeout longer than that window; and with it set to no and a short store
// timeout, where the other primaries never refuse. Once the replica is promoted ratelimitd
// follows (the delay is printed and bounded) and counts exactly on the new primary.
//
// AUTH: nodes with requirepass/masterauth; the right password counts exactly on every node, a
// wrong one makes /readyz 503 and checks answer by on_store_error; neither password is logged.
#include "ratelimitd/store/redis/cluster/key_slot.hpp"
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::test::cluster_failover_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using store::redis::cluster::key_slot;

const char* const config = R"(
policies:
  open: { algorithm: fixed_window, limit: 10, window: 60s, on_store_error: allow }
  closed: { algorithm: sliding_log, limit: 10, window: 60s, on_store_error: deny }
  steady: { algorithm: fixed_window, limit: 1000000, window: 60s, on_store_error: allow }
)";

/// One way to run a cluster through a failover.
struct FailoverCase {
    const char* name;
    /// cluster-require-full-coverage. With yes (Redis's default) every node answers CLUSTERDOWN
    /// from marking the primary failed until its replica is promoted (0.5-1 s measured); the
    /// store timeout is then long enough to ride that out with retries, so the other primaries'
    /// checks are still decided by Redis. With no, the other primaries keep answering, and a
    /// store timeout shorter than that window is enough.
    bool full_coverage;
    std::chrono::milliseconds store_timeout;
};

void PrintTo(const FailoverCase& c, std::ostream* os) { *os << c.name; }

class ClusterFailover : public ::testing::TestWithParam<FailoverCase> {};
// A check on the dead primary's slots fails fast (connection refused, then the breaker): far
// below the store timeout, with room for a loaded 2-core machine.
constexpr auto dead_slot_latency_bound = 750ms;
// How long ratelimitd may take to use the promoted replica (measured: see the README).
constexpr auto follow_bound = 5s;

std::string body(const std::string& policy, const std::string& tenant) {
    return json{{"policy", policy}, {"tenant", tenant}}.dump();
}

bool degraded(const HttpResponse& r) { return !r.header("x-ratelimit-degraded").empty(); }

std::string outcome(const HttpResponse& r) { return std::to_string(r.status) + (degraded(r) ? "+degraded" : ""); }

/// Tenants whose key for `policy` lands on `node`, by the slot owners read before.
class Tenants {
public:
    explicit Tenants(std::vector<int> owners) : owners_(std::move(owners)) {}
    std::string next(const std::string& policy, const std::string& prefix, int node) {
        for (;;) {
            const std::string name = prefix + "-" + std::to_string(n_++);
            if (owners_[static_cast<size_t>(key_slot("rl:" + policy + ":" + name + ":global"))] == node) return name;
        }
    }

private:
    std::vector<int> owners_;
    int n_ = 0;
};

/// How many of 30 concurrent checks were admitted; any answer other than 200 or 429 is added to
/// `other`.
int admitted(unsigned short port, const std::string& policy, const std::string& tenant, int* other = nullptr) {
    const auto tally = fire(port, 30, 10, [&](HttpClient& c) { return c.post("/v1/check", body(policy, tenant)); });
    if (other) *other += tally.other;
    return tally.allowed;
}

/// What the checks on one surviving primary met while the failover went on.
struct Seen {
    std::mutex mu;
    std::map<std::string, int> outcomes;
    std::chrono::milliseconds worst{0};
    int slow = 0;  // answered after more than 100 ms: held through CLUSTERDOWN by retries
};

/// Checks on the two primaries that survive (nodes 1 and 2), one connection each, latencies
/// recorded, from construction until stop().
class SurvivorLoad {
public:
    SurvivorLoad(unsigned short port, Tenants& tenants) {
        for (int s = 0; s < 2; ++s) {
            const std::string tenant = tenants.next("steady", "survivor", s + 1);
            threads_.emplace_back([this, port, s, tenant] { run(port, seen[static_cast<size_t>(s)], tenant); });
        }
    }
    ~SurvivorLoad() { stop(); }
    void stop() {
        stop_ = true;
        for (auto& t : threads_) {
            if (t.joinable()) t.join();
        }
    }
    std::array<Seen, 2> seen;

private:
    void run(unsigned short port, Seen& out, const std::string& tenant) {
        HttpClient c(port);
        while (!stop_) {
            const auto t0 = steady::now();
            const auto r = c.post("/v1/check", body("steady", tenant));
            const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0);
            std::lock_guard lock(out.mu);
            ++out.outcomes[outcome(r)];
            out.worst = std::max(out.worst, took);
            if (took > 100ms) ++out.slow;
            std::this_thread::sleep_for(5ms);
        }
    }
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
};

/// What the checks on the dead primary's slots met from the kill until ratelimitd followed.
struct Outage {
    std::map<std::string, std::map<std::string, int>> seen;  // policy -> outcome -> count
    std::chrono::milliseconds worst{0};
    std::optional<steady::time_point> cluster_failed, promoted, followed;
};

/// Both policies decided by Redis on 12 fresh connections in a row: every server thread's
/// ClusterStore has followed.
bool every_thread_decides(unsigned short port, Tenants& tenants, int victim) {
    for (int i = 0; i < 12; ++i) {
        HttpClient c(port);
        const auto open = c.post("/v1/check", body("open", tenants.next("open", "probe", victim)));
        const auto closed = c.post("/v1/check", body("closed", tenants.next("closed", "probe", victim)));
        if (open.status != 200 || degraded(open) || closed.status != 200 || degraded(closed)) return false;
    }
    return true;
}

/// One client alternates the policies on fresh tenants of the dead primary's slots until
/// ratelimitd follows (20 s at most). Meanwhile the surviving nodes' cluster_state is watched.
Outage ride_out_the_outage(const RedisCluster& cluster, unsigned short port, Tenants& tenants, int victim,
                           int replica, steady::time_point killed) {
    Outage out;
    HttpClient client(port);
    for (int n = 0; steady::now() - killed < 20s; ++n) {
        if (!out.cluster_failed &&
            cluster.command(1, {"CLUSTER", "INFO"}).find("cluster_state:fail") != std::string::npos) {
            out.cluster_failed = steady::now();
        }
        if (!out.promoted && cluster.is_primary(replica)) out.promoted = steady::now();
        const std::string policy = n % 2 ? "open" : "closed";
        const auto t0 = steady::now();
        const auto r = client.post("/v1/check", body(policy, tenants.next(policy, "during", victim)));
        out.worst = std::max(out.worst, std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0));
        ++out.seen[policy][outcome(r)];
        if (out.promoted && !degraded(r) && every_thread_decides(port, tenants, victim)) {
            out.followed = steady::now();
            break;
        }
        std::this_thread::sleep_for(10ms);
    }
    return out;
}

/// The failover's figures, printed for the README: the delays and what each side answered.
void print_failover(const FailoverCase& param, const Outage& outage, const std::array<Seen, 2>& survivors,
                    steady::time_point killed) {
    const auto ms = [](steady::duration d) {
        return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
    };
    std::printf("CLUSTER failover (%s, store timeout %lld ms): cluster_state:fail %lld ms after the kill, replica promoted %lld ms after the "
                "kill; ratelimitd answered from the new primary %lld ms after the promotion (every thread, 20 ms "
                "polling); worst latency on the dead slots %lld ms\n",
                param.name, static_cast<long long>(param.store_timeout.count()),
                outage.cluster_failed ? ms(*outage.cluster_failed - killed) : -1LL, ms(*outage.promoted - killed),
                ms(*outage.followed - *outage.promoted), static_cast<long long>(outage.worst.count()));
    for (const auto& [policy, outcomes] : outage.seen) {
        for (const auto& [o, count] : outcomes) std::printf("  dead slots, %s %s: %d\n", policy.c_str(), o.c_str(), count);
    }
    for (size_t s = 0; s < survivors.size(); ++s) {
        for (const auto& [o, count] : survivors[s].outcomes) {
            std::printf("  node %zu, steady %s: %d\n", s + 1, o.c_str(), count);
        }
        std::printf("  node %zu: worst latency %lld ms, %d checks held over 100 ms\n", s + 1,
                    static_cast<long long>(survivors[s].worst.count()), survivors[s].slow);
    }
}

/// In between, each policy answered by its failure mode, and only by it or a real verdict.
void expect_failure_modes_on_the_dead_slots(Outage& outage) {
    EXPECT_LT(*outage.followed - *outage.promoted, follow_bound);
    EXPECT_LT(outage.worst, dead_slot_latency_bound) << "checks on the dead primary's slots fail fast";
    EXPECT_GT(outage.seen["open"]["200+degraded"], 0);
    EXPECT_GT(outage.seen["closed"]["503+degraded"], 0);
    for (const auto& [o, count] : outage.seen["open"]) EXPECT_TRUE(o == "200" || o == "200+degraded") << o;
    for (const auto& [o, count] : outage.seen["closed"]) EXPECT_TRUE(o == "200" || o == "503+degraded") << o;
}

/// The other primaries were decided by Redis throughout, each check within the store timeout.
void expect_survivors_decided_by_redis(const FailoverCase& param, const Outage& outage,
                                       std::array<Seen, 2>& survivors) {
    for (size_t s = 0; s < survivors.size(); ++s) {
        EXPECT_GT(survivors[s].outcomes["200"], 0) << "node " << s + 1;
        for (const auto& [o, count] : survivors[s].outcomes) EXPECT_EQ(o, "200") << "node " << s + 1 << " x" << count;
        EXPECT_LT(survivors[s].worst, param.store_timeout + 500ms) << "node " << s + 1;
    }
    if (param.full_coverage) {
        // The surviving nodes answered CLUSTERDOWN between marking the primary failed and the
        // promotion; the checks that met it were retried until the cluster was whole again.
        EXPECT_TRUE(outage.cluster_failed) << "cluster_state:fail never seen on node 1";
        if (outage.cluster_failed) {
            EXPECT_GT(survivors[0].slow + survivors[1].slow, 0) << "no check was held through CLUSTERDOWN";
        }
    } else {
        EXPECT_FALSE(outage.cluster_failed) << "cluster_state:fail without full coverage required";
    }
}

/// After: exact on the new primary, where the keys now live.
void expect_exact_on_the_new_primary(const RedisCluster& cluster, unsigned short port, Tenants& tenants,
                                     int victim, int replica) {
    const std::string open_after = tenants.next("open", "after", victim);
    int other = 0;
    EXPECT_EQ(admitted(port, "open", open_after, &other), 10);
    EXPECT_EQ(admitted(port, "closed", tenants.next("closed", "after", victim), &other), 10);
    EXPECT_EQ(admitted(port, "open", open_after, &other), 0);
    EXPECT_EQ(admitted(port, "open", tenants.next("open", "after", 2), &other), 10);
    EXPECT_EQ(other, 0);
    EXPECT_EQ(cluster.command(replica, {"GET", "rl:open:" + open_after + ":global"}), "10");
}

RedisClusterOptions failover_cluster(const FailoverCase& param) {
    RedisClusterOptions options;
    options.require_full_coverage = param.full_coverage;
    options.primaries = 3;
    options.replicas_per_primary = 1;
    options.node_timeout = 1000ms;
    return options;
}

TEST_P(ClusterFailover, ReplicaPromotionIsFollowedWithFailureModesMeanwhileAndOtherPrimariesUntouched) {
    const FailoverCase& param = GetParam();
    RedisCluster cluster(failover_cluster(param));
    const int victim = 0;
    const int replica = cluster.replica_of(victim);
    ASSERT_GE(replica, 3) << "no replica of node 0";
    Tenants tenants(cluster.owners());

    Ratelimitd server(config, cluster.url(),
                      {"--store-timeout", std::to_string(param.store_timeout.count()) + "ms"});
    ASSERT_NE(server.process().log().find("(3 primaries)"), std::string::npos) << server.process().log();

    // Before: exact on the primary that will die, and on the others.
    int other = 0;
    EXPECT_EQ(admitted(server.port(), "open", tenants.next("open", "before", victim), &other), 10);
    EXPECT_EQ(admitted(server.port(), "closed", tenants.next("closed", "before", victim), &other), 10);
    EXPECT_EQ(admitted(server.port(), "open", tenants.next("open", "before", 1), &other), 10);
    EXPECT_EQ(other, 0);

    SurvivorLoad survivors(server.port(), tenants);
    std::this_thread::sleep_for(50ms);  // the survivors' load is running before the kill
    cluster.kill(victim);
    const auto killed = steady::now();
    Outage outage = ride_out_the_outage(cluster, server.port(), tenants, victim, replica, killed);
    survivors.stop();

    ASSERT_TRUE(outage.promoted) << "the replica was never promoted: " << cluster.command(1, {"CLUSTER", "NODES"});
    ASSERT_TRUE(outage.followed) << server.process().log();
    print_failover(param, outage, survivors.seen, killed);
    expect_failure_modes_on_the_dead_slots(outage);
    expect_survivors_decided_by_redis(param, outage, survivors.seen);
    expect_exact_on_the_new_primary(cluster, server.port(), tenants, victim, replica);
    EXPECT_TRUE(server.process().running());
}

INSTANTIATE_TEST_SUITE_P(Coverage, ClusterFailover,
                         ::testing::Values(FailoverCase{"FullCoverage", true, 2000ms},
                                           FailoverCase{"PartialCoverage", false, 250ms}),
                         [](const ::testing::TestParamInfo<FailoverCase>& info) { return std::string(info.param.name); });

TEST(ClusterAuth, PasswordIsUsedOnEveryNodeAndAWrongOneFailsByPolicyWithoutBeingLogged) {
    const std::string password = "cluster-S3cret-must-not-leak-a41f";
    const std::string wrong = "wrong-S3cret-must-not-leak-77c2";
    RedisClusterOptions options;
    options.password = password;
    RedisCluster cluster(options);
    ASSERT_EQ(redis_command(cluster.port(1), "", {"PING"}).rfind("(error) NOAUTH", 0), 0u) << "requirepass not set";
    Tenants tenants(cluster.owners());

    // One seed given; the others are found by CLUSTER SLOTS and authenticated to as well.
    const std::string seed = "127.0.0.1:" + std::to_string(cluster.port(0));
    std::string log;
    {
        Ratelimitd server(config, "redis-cluster://:" + password + "@" + seed);
        EXPECT_NE(server.process().log().find("(3 primaries)"), std::string::npos) << server.process().log();
        HttpClient c(server.port());
        EXPECT_TRUE(wait_until([&] { return c.get("/readyz").status == 200; }, 10s));
        int other = 0;
        for (int node = 0; node < 3; ++node) {
            const std::string tenant = tenants.next("open", "auth", node);
            EXPECT_EQ(admitted(server.port(), "open", tenant, &other), 10) << "node " << node;
            EXPECT_EQ(admitted(server.port(), "closed", tenants.next("closed", "auth", node), &other), 10)
                << "node " << node;
            EXPECT_EQ(cluster.command(node, {"GET", "rl:open:" + tenant + ":global"}), "10") << "node " << node;
        }
        EXPECT_EQ(other, 0);
        server.process().signal(SIGTERM);
        EXPECT_EQ(server.process().wait(6s), 0);
        log = server.process().log();
    }

    std::string wrong_log;
    {
        Ratelimitd server(config, "redis-cluster://:" + wrong + "@" + seed, {"--log-level", "debug"});
        HttpClient c(server.port());
        EXPECT_EQ(c.get("/readyz").status, 503);
        const auto open = c.post("/v1/check", body("open", "wrong-open"));
        EXPECT_EQ(outcome(open), "200+degraded") << open.body;
        const auto closed = c.post("/v1/check", body("closed", "wrong-closed"));
        EXPECT_EQ(outcome(closed), "503+degraded") << closed.body;
        EXPECT_EQ(c.get("/readyz").status, 503);
        server.process().signal(SIGTERM);
        EXPECT_EQ(server.process().wait(6s), 0);
        wrong_log = server.process().log();
    }
    // The failure is logged, naming the node, not the password.
    EXPECT_NE(wrong_log.find(seed), std::string::npos) << wrong_log;
    EXPECT_NE(wrong_log.find("WRONGPASS"), std::string::npos) << wrong_log;
    for (const std::string& secret : {password, password.substr(0, 12), wrong, wrong.substr(0, 12)}) {
        EXPECT_EQ(log.find(secret), std::string::npos) << "log holds \"" << secret << "\":\n" << log;
        EXPECT_EQ(wrong_log.find(secret), std::string::npos) << "log holds \"" << secret << "\":\n" << wrong_log;
    }
}

}  // namespace
}  // namespace ratelimitd::test::cluster_failover_test
