// Redis Cluster: a real 3-primary cluster on loopback behind the real binary. Exact admission for
// tenants spread over every node, a slot migrated under load (MOVED/ASK followed, nothing fails,
// counts exact), layered limits across slots, and the refusal of layered sliding windows.
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/store/redis/cluster/cluster_store.hpp"
#include "ratelimitd/store/redis/cluster/key_slot.hpp"
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/processes.hpp"
#include "support/run_until.hpp"
#include "support/wait.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include <array>
#include <csignal>
#include <fstream>
#include <atomic>
#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::test::cluster_test {
namespace {

using namespace std::chrono_literals;
using store::redis::cluster::key_slot;
namespace net = boost::asio;

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

/// Uses up whatever is left of the migrant's limit of 1500, then some: its answers are added to
/// the tallies the load kept.
void use_up_the_migrants_limit(unsigned short port, std::atomic<int>& allowed, std::atomic<int>& denied,
                               std::atomic<int>& other) {
    const int left = 1500 - allowed.load();
    if (left > 0) {
        auto tally = fire(port, left + 50, 8,
                          [](HttpClient& c) { return c.post("/v1/check", check_body("migrating", "migrant")); });
        allowed += tally.allowed;
        denied += tally.denied;
        other += tally.other;
    }
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
    auto redirects = [&](const char* kind) {
        return sample(metrics(), std::string("ratelimitd_redis_cluster_redirects_total{kind=\"") + kind + "\"}");
    };

    EXPECT_TRUE(wait_until([&] { return allowed >= 100; }, 10s, 2ms));
    cluster_->begin_migration(slot, from, to);
    cluster_->migrate_keys(slot, from, to);
    // The key has left `from`, which still owns the slot: every check there is an ASK now.
    EXPECT_TRUE(wait_until([&] { return redirects("ask") > ask0; }, 10s, 2ms));
    cluster_->finish_migration(slot, to);
    // `from` answers MOVED from now on, until ratelimitd's map says `to`.
    EXPECT_TRUE(wait_until([&] { return redirects("moved") > moved0; }, 10s, 2ms));
    const int after_move = allowed + denied;
    EXPECT_TRUE(wait_until([&] { return allowed + denied > after_move + 200; }, 10s, 2ms));
    stop = true;
    for (auto& t : load) t.join();

    use_up_the_migrants_limit(server_->port(), allowed, denied, other);
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

/// One server thread's ClusterStore on an io_context the test runs.
class ClusterStoreOnOneThread {
public:
    explicit ClusterStoreOnOneThread(const RedisCluster& cluster) {
        auto endpoint = store::redis::cluster::parse_cluster_url(cluster.url());
        if (!endpoint) throw std::runtime_error(endpoint.error().detail);
        store_ = std::make_unique<store::redis::cluster::ClusterStore>(ioc_.get_executor(), *endpoint, 5s,
                                                                       "cluster-test");
        if (!run_until(ioc_, [this] { return store_->any_ready(); }, 10s)) throw std::runtime_error("no slot map");
    }
    ~ClusterStoreOnOneThread() {
        store_->stop();
        work_.reset();
        ioc_.poll();
        store_.reset();
    }

    /// Runs every coroutine `make(i)` for i in 0..n concurrently, until all are done.
    template <class Make>
    void together(std::size_t n, Make make) {
        auto done = std::make_shared<std::size_t>(0);
        for (std::size_t i = 0; i < n; ++i) {
            net::co_spawn(ioc_, make(i), [done](std::exception_ptr) { ++*done; });
        }
        if (!run_until(ioc_, [&] { return *done == n; }, 30s)) throw std::runtime_error("the store did not answer");
    }

    store::redis::cluster::ClusterStore& store() { return *store_; }

private:
    net::io_context ioc_{1};
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work_{ioc_.get_executor()};
    std::unique_ptr<store::redis::cluster::ClusterStore> store_;
};

policy::Policy fixed(std::string name, std::int64_t limit) {
    policy::Policy p;
    p.name = std::move(name);
    p.algorithm = policy::Algorithm::fixed_window;
    p.limit = limit;
    p.window = 60s;
    p.burst = limit;
    return p;
}

TEST_F(Cluster, CoalescesOnlyKeysOfOneSlotPerCall) {
    ClusterStoreOnOneThread lane(*cluster_);
    const auto p = fixed("co", 20);
    // Pairs sharing a hash tag (one slot) and tags on every node, all started before any answer:
    // a batch mixing slots would fail with CROSSSLOT.
    std::vector<std::string> keys;
    for (int t = 0; t < 6; ++t) {
        keys.push_back("rl:co:{tag" + std::to_string(t) + "}:a");
        keys.push_back("rl:co:{tag" + std::to_string(t) + "}:b");
    }
    constexpr std::size_t per_key = 30;
    std::map<std::string, int> allowed;
    int failed = 0;
    std::string failure;
    lane.together(keys.size() * per_key, [&](std::size_t i) -> net::awaitable<void> {
        const std::string key = keys[i % keys.size()];
        auto v = co_await lane.store().apply(p, key, 1);
        if (!v) {
            ++failed;
            failure = v.error().detail;
        } else if (v->allowed) {
            ++allowed[key];
        }
    });
    EXPECT_EQ(failed, 0) << failure;
    for (const auto& k : keys) EXPECT_EQ(allowed[k], 20) << k;
    EXPECT_GT(lane.store().checks_batched(), lane.store().batches_sent()) << "no check was coalesced";
    std::printf("%zu checks over %zu keys in 6 slots: %llu script calls\n", keys.size() * per_key, keys.size(),
                static_cast<unsigned long long>(lane.store().batches_sent()));
}

TEST_F(Cluster, LayeredChecksRunWithinOneSlotAndAcrossSlotsWithRefunds) {
    ClusterStoreOnOneThread lane(*cluster_);
    const auto minute = fixed("layer-a", 3);
    const auto hour = fixed("layer-b", 5);
    std::vector<result<check::Verdict>> same, across;
    lane.together(4, [&](std::size_t) -> net::awaitable<void> {
        std::vector<store::LimitCheck> checks{{&minute, "rl:layer:{t1:global}:60", 1},
                                              {&hour, "rl:layer:{t1:global}:3600", 1}};
        same.push_back(co_await lane.store().apply_all(std::move(checks)));
    });
    ASSERT_EQ(same.size(), 4u);
    int admitted = 0;
    for (auto& v : same) {
        ASSERT_TRUE(v) << v.error().detail;
        admitted += v->allowed ? 1 : 0;
    }
    EXPECT_EQ(admitted, 3);

    // Across slots (issue 25): decided slot by slot; the 4th is denied by the minute limit and
    // whatever the hour limit was charged for it is given back.
    ASSERT_NE(key_slot("rl:layer:{t1}:x"), key_slot("rl:layer:{t2}:x"));
    for (int i = 0; i < 4; ++i) {
        lane.together(1, [&](std::size_t) -> net::awaitable<void> {
            std::vector<store::LimitCheck> checks{{&minute, "rl:layer:{t1}:x", 1}, {&hour, "rl:layer:{t2}:x", 1}};
            across.push_back(co_await lane.store().apply_all(std::move(checks)));
        });
    }
    ASSERT_EQ(across.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        ASSERT_TRUE(across[i]) << across[i].error().detail;
        EXPECT_EQ(across[i]->allowed, i < 3) << i;
        ASSERT_EQ(across[i]->windows.size(), 2u);
    }
    EXPECT_EQ(across[3]->windows[1].remaining, 2) << "the hour limit holds the 3 admitted checks only";
    EXPECT_EQ(cluster_->command(cluster_->owner_of(key_slot("rl:layer:{t2}:x")), {"GET", "rl:layer:{t2}:x"}), "3");

    // peek and reset reach the owner too.
    std::optional<result<check::Verdict>> peeked;
    std::optional<result<bool>> reset;
    lane.together(1, [&](std::size_t) -> net::awaitable<void> {
        peeked.emplace(co_await lane.store().peek(minute, "rl:layer:{t1:global}:60"));
        reset.emplace(co_await lane.store().reset("rl:layer:{t1:global}:60"));
    });
    ASSERT_TRUE(*peeked) << (*peeked).error().detail;
    EXPECT_EQ((**peeked).windows.front().remaining, 0);
    ASSERT_TRUE(*reset);
    EXPECT_TRUE(**reset);
}

TEST_F(Cluster, RefusesLayeredSlidingWindowsAtStartAndInCheckConfig) {
    const std::string layered = R"(
policies:
  per-key: { algorithm: fixed_window, limit: 10, window: 60s }
  per-ip: { algorithm: sliding_window, limit: 50, window: 60s }
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
    EXPECT_NE(serve.log().find("a single Redis or Sentinel"), std::string::npos) << serve.log();

    const std::string with_store = scratch_dir() + "/cluster-layered-store.yaml";
    {
        std::ofstream(with_store) << "redis: " << cluster_->url() << "\n" << layered;
    }
    Child check({RATELIMITD_BINARY, "--check-config", with_store}, scratch_dir() + "/cluster-check.log");
    EXPECT_EQ(check.wait(10s), 1);
    EXPECT_NE(check.log().find("a single Redis or Sentinel"), std::string::npos) << check.log();

    // The same file against a single Redis is fine.
    Child single({RATELIMITD_BINARY, "--check-config", path}, scratch_dir() + "/cluster-check-single.log");
    EXPECT_EQ(single.wait(10s), 0) << single.log();

    // A reload to it is refused too, and the running config keeps serving.
    server_->write_config(layered);
    server_->process().signal(SIGHUP);
    EXPECT_NE(server_->process().wait_for_log("reload refused", 10s).find("a single Redis or Sentinel"),
              std::string::npos);
    server_->write_config(config);
    HttpClient c(server_->port());
    EXPECT_EQ(c.post("/v1/check", check_body("bucket", "after-refused-reload")).status, 200);
}

}  // namespace
}  // namespace ratelimitd::test::cluster_test
