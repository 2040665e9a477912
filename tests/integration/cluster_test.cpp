// Redis Cluster: a real 3-primary cluster on loopback behind the real binary. Exact admission for
// tenants spread over every node, a slot migrated under load (MOVED/ASK followed, nothing fails,
// counts exact), and the refusal of layered limits.
#include "ratelimitd/check/key.hpp"
#include "ratelimitd/store/redis/cluster/key_slot.hpp"
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <atomic>
#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::test {
namespace {

using namespace std::chrono_literals;
using store::redis::cluster::key_slot;

const char* const config = R"(
policies:
  twenty: { algorithm: fixed_window, limit: 20, window: 60s, on_store_error: allow }
  migrating: { algorithm: fixed_window, limit: 1500, window: 60s, on_store_error: allow }
  bucket: { algorithm: token_bucket, limit: 10, window: 60s }
)";

/// The value of one sample line of the exposition ("name{labels} value"), or 0 when absent.
double sample(const std::string& exposition, const std::string& series) {
    std::istringstream lines(exposition);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    }
    return 0;
}

std::string check_body(const std::string& policy, const std::string& tenant) {
    return R"({"policy":")" + policy + R"(","tenant":")" + tenant + R"("})";
}

class Cluster : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        cluster_ = new RedisCluster(3);
        // A generous store timeout: this is about redirects, not about a busy 2-core machine.
        server_ = new Ratelimitd(config, cluster_->url(), {"--store-timeout", "2s"});
    }
    static void TearDownTestSuite() {
        delete server_;
        delete cluster_;
    }
    static std::string metrics() {
        HttpClient c(server_->port());
        return c.get("/metrics").body;
    }
    static RedisCluster* cluster_;
    static Ratelimitd* server_;
};
RedisCluster* Cluster::cluster_ = nullptr;
Ratelimitd* Cluster::server_ = nullptr;

TEST_F(Cluster, KeySlotAgreesWithTheServer) {
    for (const std::string key : {"rl:twenty:t0:global", "rl:api:{t1:global}:60", "a{b}c", "{}", "x{", "ip:2001:db8::1"}) {
        EXPECT_EQ(std::to_string(key_slot(key)), cluster_->command(0, {"CLUSTER", "KEYSLOT", key})) << key;
    }
}

TEST_F(Cluster, StartsReadyAndDescribesTheCluster) {
    EXPECT_NE(server_->process().log().find("(3 primaries)"), std::string::npos) << server_->process().log();
    HttpClient c(server_->port());
    EXPECT_EQ(c.get("/readyz").status, 200);
    auto res = c.post("/v1/check", check_body("bucket", "ready-probe"));
    EXPECT_EQ(res.status, 200) << res.body;
    EXPECT_NE(metrics().find("ratelimitd_redis_cluster_redirects_total{kind=\"moved\"}"), std::string::npos);
}

TEST_F(Cluster, AdmitsExactlyTheLimitForTenantsOnEveryNode) {
    // Four tenants per node, picked by where their keys land.
    constexpr int tenants = 12;
    constexpr int per_tenant = 100;
    std::vector<std::string> names;
    std::array<int, 3> per_node{};
    for (int i = 0; names.size() < tenants; ++i) {
        const std::string name = "spread-" + std::to_string(i);
        const int owner = cluster_->owner_of(key_slot("rl:twenty:" + name + ":global"));
        if (per_node[static_cast<size_t>(owner)] < 4) {
            ++per_node[static_cast<size_t>(owner)];
            names.push_back(name);
        }
    }
    std::array<std::atomic<int>, tenants> allowed{};
    std::array<std::atomic<int>, tenants> other{};
    std::atomic<int> next{0};
    fire(server_->port(), tenants * per_tenant, 24, [&](HttpClient& c) {
        const int t = next.fetch_add(1) % tenants;
        auto res = c.post("/v1/check", check_body("twenty", names[static_cast<size_t>(t)]));
        if (res.status == 200) ++allowed[static_cast<size_t>(t)];
        else if (res.status != 429) ++other[static_cast<size_t>(t)];
        return res;
    });
    std::set<int> owners;
    long long keys = 0;
    for (int t = 0; t < tenants; ++t) {
        const std::string& name = names[static_cast<size_t>(t)];
        EXPECT_EQ(allowed[static_cast<size_t>(t)], 20) << name;
        EXPECT_EQ(other[static_cast<size_t>(t)], 0) << name;
        const std::string key = "rl:twenty:" + name + ":global";
        const int owner = cluster_->owner_of(key_slot(key));
        owners.insert(owner);
        EXPECT_EQ(cluster_->command(owner, {"GET", key}), "20") << key;
        const long long ttl = cluster_->integer(owner, {"PTTL", key});
        EXPECT_GT(ttl, 0) << key;
        EXPECT_LE(ttl, 60'000) << key;
    }
    EXPECT_EQ(owners.size(), 3u) << "the tenants' keys should land on every node";
    for (int n = 0; n < 3; ++n) {
        const long long n_keys = std::stoll(cluster_->command(n, {"EVAL", "return #redis.call('KEYS', 'rl:twenty:*')", "0"}));
        EXPECT_GT(n_keys, 0) << "node " << n;
        keys += n_keys;
    }
    EXPECT_EQ(keys, tenants);
}

TEST_F(Cluster, FollowsASlotMigratedUnderLoad) {
    const std::string key = "rl:migrating:migrant:global";
    const int slot = key_slot(key);
    const int from = cluster_->owner_of(slot);
    const int to = (from + 1) % 3;
    const std::string before = metrics();
    const double moved0 = sample(before, "ratelimitd_redis_cluster_redirects_total{kind=\"moved\"}");
    const double ask0 = sample(before, "ratelimitd_redis_cluster_redirects_total{kind=\"ask\"}");

    std::atomic<bool> stop{false};
    std::atomic<int> allowed{0}, denied{0}, other{0};
    std::vector<std::thread> load;
    for (int i = 0; i < 8; ++i) {
        load.emplace_back([&] {
            HttpClient c(server_->port());
            while (!stop) {
                const int status = c.post("/v1/check", check_body("migrating", "migrant")).status;
                (status == 200 ? allowed : status == 429 ? denied : other)++;
            }
        });
    }
    auto wait_until = [](auto done, std::chrono::milliseconds timeout) {
        const auto until = std::chrono::steady_clock::now() + timeout;
        while (!done() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(2ms);
        return done();
    };
    auto redirects = [&](const char* kind) {
        return sample(metrics(), std::string("ratelimitd_redis_cluster_redirects_total{kind=\"") + kind + "\"}");
    };

    EXPECT_TRUE(wait_until([&] { return allowed >= 100; }, 10s));
    cluster_->begin_migration(slot, from, to);
    cluster_->migrate_keys(slot, from, to);
    // The key has left `from`, which still owns the slot: every check there is an ASK now.
    EXPECT_TRUE(wait_until([&] { return redirects("ask") > ask0; }, 10s));
    cluster_->finish_migration(slot, to);
    // `from` answers MOVED from now on, until ratelimitd's map says `to`.
    EXPECT_TRUE(wait_until([&] { return redirects("moved") > moved0; }, 10s));
    const int after_move = allowed + denied;
    EXPECT_TRUE(wait_until([&] { return allowed + denied > after_move + 200; }, 10s));
    stop = true;
    for (auto& t : load) t.join();

    // Use up whatever is left of the limit, then some.
    const int left = 1500 - allowed.load();
    if (left > 0) {
        auto tally = fire(server_->port(), left + 50, 8,
                          [](HttpClient& c) { return c.post("/v1/check", check_body("migrating", "migrant")); });
        allowed += tally.allowed;
        denied += tally.denied;
        other += tally.other;
    }
    EXPECT_EQ(other, 0);
    EXPECT_EQ(allowed, 1500);
    EXPECT_GT(denied, 0);
    EXPECT_EQ(cluster_->owner_of(slot), to);
    EXPECT_EQ(cluster_->command(to, {"GET", key}), "1500");
    EXPECT_GT(cluster_->integer(to, {"PTTL", key}), 0);
    EXPECT_EQ(cluster_->integer(from, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)}), 0);

    const std::string after = metrics();
    EXPECT_EQ(sample(after, "ratelimitd_checks_total{policy=\"migrating\",verdict=\"degraded_allowed\"}"), 0) << after;
    EXPECT_EQ(sample(after, "ratelimitd_checks_total{policy=\"migrating\",verdict=\"failed_closed\"}"), 0) << after;
    std::printf("slot %d moved node %d -> %d under load: %d allowed, %d denied; redirects followed: moved %.0f, ask %.0f\n",
                slot, from, to, allowed.load(), denied.load(),
                sample(after, "ratelimitd_redis_cluster_redirects_total{kind=\"moved\"}") - moved0,
                sample(after, "ratelimitd_redis_cluster_redirects_total{kind=\"ask\"}") - ask0);
}

TEST_F(Cluster, RefusesLayeredLimitsAtStartAndInCheckConfig) {
    const std::string layered = R"(
policies:
  per-key: { algorithm: fixed_window, limit: 10, window: 60s }
  per-ip: { algorithm: fixed_window, limit: 50, window: 60s }
identity:
  - { name: api_key, header: X-Api-Key, hash: true }
routes:
  - path: "/api/*"
    limits: [ { policy: per-key, identity: api_key }, { policy: per-ip, identity: client_ip } ]
)";
    const std::string path = scratch_dir() + "/cluster-layered.yaml";
    {
        std::ofstream(path) << layered;
    }
    Child serve({RATELIMITD_BINARY, "--config", path, "--listen", "127.0.0.1:0", "--redis", cluster_->url()},
                scratch_dir() + "/cluster-layered.log");
    EXPECT_EQ(serve.wait(10s), 1);
    EXPECT_NE(serve.log().find("routes[0] (/api/*)"), std::string::npos) << serve.log();
    EXPECT_NE(serve.log().find("layered limits need a single Redis or Sentinel"), std::string::npos) << serve.log();

    const std::string with_store = scratch_dir() + "/cluster-layered-store.yaml";
    {
        std::ofstream(with_store) << "redis: " << cluster_->url() << "\n" << layered;
    }
    Child check({RATELIMITD_BINARY, "--check-config", with_store}, scratch_dir() + "/cluster-check.log");
    EXPECT_EQ(check.wait(10s), 1);
    EXPECT_NE(check.log().find("layered limits need a single Redis or Sentinel"), std::string::npos) << check.log();

    // The same file against a single Redis is fine.
    Child single({RATELIMITD_BINARY, "--check-config", path}, scratch_dir() + "/cluster-check-single.log");
    EXPECT_EQ(single.wait(10s), 0) << single.log();
}

}  // namespace
}  // namespace ratelimitd::test
