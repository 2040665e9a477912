// A fleet: three ratelimitd instances sharing one Redis (and one Redis Cluster), requests
// spread over all three at once; each key admits exactly its limit across the fleet, not per
// instance.
#include "ratelimitd/store/redis/cluster/key_slot.hpp"
#include "support/http_client.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace ratelimitd::test::fleet_test {
namespace {

using json = nlohmann::json;
using store::redis::cluster::key_slot;

// Windows long enough that nothing refills or expires during the test.
const char* const config = R"(
policies:
  fw:
    algorithm: fixed_window
    limit: 50
    window: 600s
  sl:
    algorithm: sliding_log
    limit: 50
    window: 600s
  tb:
    algorithm: token_bucket
    limit: 50
    window: 600s
)";

const std::vector<std::string> policies{"fw", "sl", "tb"};

// Sends `per_key` checks for every policy × tenant, spread over all sidecars at once (four
// clients per sidecar), and expects exactly 50 admitted per key across the fleet. Each client
// sends its own fixed slice of the requests (every `clients`-th), so every sidecar answers its
// share however the machine schedules the clients: with one shared counter, a busy machine
// could let one sidecar's clients take most of the requests and the others hardly take part.
void expect_fleet_admits_exactly_the_limit(const std::vector<std::unique_ptr<Ratelimitd>>& fleet,
                                           const std::vector<std::string>& tenants, int per_key) {
    struct Key {
        std::string policy, tenant;
        auto operator<=>(const Key&) const = default;
    };
    std::vector<Key> keys;
    for (const auto& p : policies) {
        for (const auto& t : tenants) keys.push_back({p, t});
    }
    const int total = per_key * static_cast<int>(keys.size());
    const int clients = 4 * static_cast<int>(fleet.size());
    std::mutex mu;
    std::map<Key, std::map<int, int>> statuses;  // key -> status -> count
    std::map<size_t, int> per_sidecar;          // sidecar -> requests answered
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
        threads.emplace_back([&, c] {
            const size_t sidecar = static_cast<size_t>(c) % fleet.size();
            HttpClient client(fleet[sidecar]->port());
            for (int n = c; n < total; n += clients) {
                const Key& key = keys[static_cast<size_t>(n) % keys.size()];
                auto r = client.post("/v1/check", json{{"policy", key.policy}, {"tenant", key.tenant}}.dump());
                std::lock_guard lock(mu);
                ++statuses[key][r.status];
                ++per_sidecar[sidecar];
            }
        });
    }
    for (auto& t : threads) t.join();

    for (const auto& key : keys) {
        const std::string name = key.policy + "/" + key.tenant;
        EXPECT_EQ(statuses[key][200], 50) << name;
        EXPECT_EQ(statuses[key][429], per_key - 50) << name;
        EXPECT_EQ(statuses[key].size(), 2u) << name << ": only 200 and 429";
    }
    const int share = total / static_cast<int>(fleet.size()) / 3;
    for (size_t s = 0; s < fleet.size(); ++s) EXPECT_GE(per_sidecar[s], share) << "sidecar " << s << " took its share";
}

TEST(Fleet, ThreeSidecarsSharingOneRedisAdmitExactlyTheLimit) {
    RedisServer redis;
    std::vector<std::unique_ptr<Ratelimitd>> fleet;
    for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Ratelimitd>(config, redis.url()));

    expect_fleet_admits_exactly_the_limit(fleet, {"shared"}, 300);
    for (const auto& k : redis.keys()) EXPECT_GT(redis.integer({"PTTL", k}), 0) << k;
}

TEST(Fleet, ThreeSidecarsSharingOneClusterAdmitExactlyTheLimitOnEveryNode) {
    RedisCluster cluster(3);
    std::vector<std::unique_ptr<Ratelimitd>> fleet;
    for (int i = 0; i < 3; ++i) {
        fleet.push_back(std::make_unique<Ratelimitd>(config, cluster.url(), std::vector<std::string>{"--store-timeout", "2s"}));
    }
    // One tenant per node for the fixed-window key (the other policies' keys land where they
    // land); together the nine keys cover every node, which the end of the test checks.
    std::vector<std::string> tenants;
    std::set<int> nodes;
    for (int i = 0; tenants.size() < 3; ++i) {
        const std::string name = "fleet-" + std::to_string(i);
        if (nodes.insert(cluster.owner_of(key_slot("rl:fw:" + name + ":global"))).second) tenants.push_back(name);
    }

    expect_fleet_admits_exactly_the_limit(fleet, tenants, 120);
    int keys = 0;
    for (int n = 0; n < cluster.size(); ++n) {
        int on_node = 0;
        for (const auto& p : policies) {
            for (const auto& t : tenants) {
                const std::string key = "rl:" + p + ":" + t + ":global";
                if (cluster.owner_of(key_slot(key)) != n) continue;
                ++on_node;
                EXPECT_GT(cluster.integer(n, {"PTTL", key}), 0) << key << " is on node " << n << " with a TTL";
            }
        }
        EXPECT_GT(on_node, 0) << "node " << n << " holds none of the keys";
        keys += on_node;
    }
    EXPECT_EQ(keys, 9);
}

}  // namespace
}  // namespace ratelimitd::test::fleet_test
