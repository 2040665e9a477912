// Layered limits on a real 3-primary Redis Cluster behind three real sidecars: the limits of a
// route lie in different slots, are decided slot by slot, and a later slot's denial gives back
// what the earlier slot charged. Exact counts under concurrency, leases included, and a node
// killed between the two phases (the charge of the first is given back, nothing admitted).
#include "ratelimitd/store/redis/cluster/key_slot.hpp"
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::test::cluster_layered_test {
namespace {

using json = nlohmann::json;
using store::redis::cluster::key_slot;

const char* const config = R"(
policies:
  small: { algorithm: fixed_window, limit: 5, window: 1h, on_store_error: allow }
  large: { algorithm: fixed_window, limit: 20, window: 1h, on_store_error: allow }
  slots: { algorithm: concurrency, limit: 4, lease: 10m }
  pair: { algorithm: fixed_window, limit: 2, window: 1h }
routes:
  - { path: /layered, limits: [ { policy: small }, { policy: large } ] }
  - { path: /leased, limits: [ { policy: slots }, { policy: pair } ] }
)";

std::string key_of(const std::string& policy, const std::string& tenant) { return "rl:" + policy + ":" + tenant + ":global"; }

/// A tenant whose keys of `first` and `second` lie on different nodes, `first`'s slot lower
/// (so decided first).
std::string tenant_where(const RedisCluster& cluster, const std::string& first, const std::string& second,
                         const std::string& stem) {
    for (int i = 0;; ++i) {
        const std::string t = stem + std::to_string(i);
        const int a = key_slot(key_of(first, t));
        const int b = key_slot(key_of(second, t));
        if (a < b && cluster.owner_of(a) != cluster.owner_of(b)) return t;
    }
}

std::string counter(const RedisCluster& cluster, const std::string& key) {
    return cluster.command(cluster.owner_of(key_slot(key)), {"GET", key});
}

HttpResponse check(HttpClient& c, const std::string& tenant, const std::string& path) {
    return c.post("/v1/check", json{{"tenant", tenant}, {"method", "GET"}, {"path", path}}.dump());
}

TEST(ClusterLayered, ThreeSidecarsAdmitExactlyTheSmallestLimitAndRefundTheRest) {
    RedisCluster cluster(3);
    std::vector<std::unique_ptr<Ratelimitd>> sidecars;
    for (int i = 0; i < 3; ++i) {
        sidecars.push_back(std::make_unique<Ratelimitd>(config, cluster.url(), std::vector<std::string>{"--store-timeout", "2s"}));
    }
    // `large` is decided first: every check the small limit denies was charged to `large`
    // first and must be given back.
    const std::string t = tenant_where(cluster, "large", "small", "refunded-");
    std::vector<Tally> tallies(3);
    std::vector<std::thread> load;
    for (int i = 0; i < 3; ++i) {
        load.emplace_back([&, i] {
            tallies[static_cast<std::size_t>(i)] =
                fire(sidecars[static_cast<std::size_t>(i)]->port(), 40, 8, [&](HttpClient& c) { return check(c, t, "/layered"); });
        });
    }
    for (auto& th : load) th.join();
    int allowed = 0, denied = 0, other = 0;
    for (const auto& tally : tallies) {
        allowed += tally.allowed;
        denied += tally.denied;
        other += tally.other;
    }
    EXPECT_EQ(allowed, 5) << "never more than the smallest limit";
    EXPECT_EQ(denied, 115);
    EXPECT_EQ(other, 0);
    // Every answer was sent after its refund: the counts are final and exact.
    EXPECT_EQ(counter(cluster, key_of("small", t)), "5");
    EXPECT_EQ(counter(cluster, key_of("large", t)), "5") << "115 denied checks' charges given back";

    // Leases across slots: a check denied by `pair` holds no slot of `slots`.
    const std::string l = tenant_where(cluster, "slots", "pair", "leased-");
    HttpClient c(sidecars[0]->port());
    int leased = 0;
    for (int i = 0; i < 6; ++i) {
        const auto res = check(c, l, "/leased");
        if (res.status == 200) {
            ++leased;
            EXPECT_EQ(res.header("x-ratelimit-lease").size(), 32u);
        } else {
            EXPECT_EQ(res.status, 429);
            EXPECT_TRUE(res.header("x-ratelimit-lease").empty());
        }
    }
    EXPECT_EQ(leased, 2);
    const std::string slots_key = key_of("slots", l);
    EXPECT_EQ(cluster.command(cluster.owner_of(key_slot(slots_key)), {"ZCARD", slots_key}), "2");
}

TEST(ClusterLayered, ANodeKilledBetweenThePhasesAdmitsNothingAndTheFirstChargeIsGivenBack) {
    RedisCluster cluster(3);
    Ratelimitd sidecar(config, cluster.url(), {"--store-timeout", "1s"});
    // `small` first, on a node that stays; `large`'s node dies before the check reaches it.
    const std::string t = tenant_where(cluster, "small", "large", "killed-");
    HttpClient c(sidecar.port());
    ASSERT_EQ(check(c, t, "/layered").status, 200);
    EXPECT_EQ(counter(cluster, key_of("small", t)), "1");
    EXPECT_EQ(counter(cluster, key_of("large", t)), "1");

    cluster.kill(cluster.owner_of(key_slot(key_of("large", t))));
    const auto degraded = check(c, t, "/layered");
    // on_store_error: allow answers, flagged as degraded; the first phase's charge is gone.
    EXPECT_EQ(degraded.status, 200) << degraded.body;
    EXPECT_FALSE(degraded.header("x-ratelimit-degraded").empty());
    EXPECT_EQ(counter(cluster, key_of("small", t)), "1") << "the charge of the first slot was given back";
}

}  // namespace
}  // namespace ratelimitd::test::cluster_layered_test
