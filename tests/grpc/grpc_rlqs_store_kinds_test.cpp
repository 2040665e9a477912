// RLQS shares of one global budget on the other Redis deployments (docs/rlqs.md, "Shares
// across the fleet"): filter-shaped clients on two ratelimitd replicas sharing a real Redis
// Cluster (each bucket's ledger on the primary owning its slot; a slot moved mid-test is
// followed through ASK while it migrates and MOVED after), and a real primary named by a real
// sentinel, followed when it fails over to its replica. In every whole window each bucket's
// clients admit at most the stated bound.
#include "ratelimitd/grpc/share_ask.hpp"
#include "ratelimitd/store/redis/cluster/key_slot.hpp"

#include "support/processes.hpp"
#include "support/quota_filter.hpp"
#include "support/quota_windows.hpp"
#include "support/redis_cluster.hpp"
#include "support/rls_client.hpp"
#include "support/sentinel.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_rlqs_store_kinds_test {
namespace {

constexpr std::int64_t limit = 100;
constexpr std::int64_t window_ms = 2'000;

const std::string config = R"(rlqs:
  web:
    shared:
      match: {kind: api}
      limit: 100
      window: 2s
      reporting_interval: 200ms
      assignment_ttl: 600ms
      idle_after: 60s
)";

/// The ledger key of a bucket of the rule above, as ratelimitd names it.
std::string ledger_key(const QuotaBucket& bucket) {
    policy::RlqsRule rule;
    rule.name = "shared";
    return rls::share_key("web", rule, policy::RlqsBucketId(bucket.begin(), bucket.end()));
}

/// Two replicas on `redis_url`, and clients of unequal demand on each bucket.
class Fleet {
public:
    explicit Fleet(const std::string& redis_url) {
        for (int i = 0; i < 2; ++i) {
            replicas_.push_back(std::make_unique<Ratelimitd>(config, redis_url,
                                                             std::vector<std::string>{"--grpc-listen", "127.0.0.1:0"}));
            ports_.push_back(
                grpc_port_from_log(replicas_.back()->process().wait_for_log("grpc listening on", process_start_bound)));
        }
    }

    /// Clients of `demand` requests per second each on `bucket`, spread over the replicas.
    std::vector<const QuotaFilter*> clients(const QuotaBucket& bucket, const std::vector<double>& demand) {
        std::vector<const QuotaFilter*> out;
        for (std::size_t i = 0; i < demand.size(); ++i) {
            clients_.push_back(std::make_unique<QuotaFilter>(QuotaFilterSettings{.domain = "web",
                                                                                 .bucket = bucket,
                                                                                 .requests_per_second = demand[i],
                                                                                 .replicas = ports_,
                                                                                 .first_replica = i % 2}));
            out.push_back(clients_.back().get());
        }
        return out;
    }

    Ratelimitd& replica(std::size_t i) { return *replicas_[i]; }

    void leave() {
        for (auto& c : clients_) {
            c->leave();
            EXPECT_FALSE(c->saw_stream_error());
        }
    }

private:
    std::vector<std::unique_ptr<Ratelimitd>> replicas_;
    std::vector<unsigned short> ports_;
    std::vector<std::unique_ptr<QuotaFilter>> clients_;
};

/// Every whole window of [from, now) within the bound, and the budget used, not withheld.
void expect_shared(const std::vector<const QuotaFilter*>& clients, std::int64_t from, const char* phase) {
    const auto windows = windows_of(clients, from, now_ms(), window_ms);
    ASSERT_FALSE(windows.empty()) << phase;
    expect_within_bound(windows, phase, limit);
    for (const auto& [k, w] : windows) EXPECT_GE(w.admitted, limit / 2) << phase << " window " << k;
}

/// The first bucket after `after` whose ledger lives on another primary than `after`'s.
QuotaBucket bucket_on_another_primary(const RedisCluster& cluster, const QuotaBucket& after) {
    const int taken = cluster.owner_of(store::redis::cluster::key_slot(ledger_key(after)));
    for (int t = 0;; ++t) {
        QuotaBucket b{{"kind", "api"}, {"tenant", "t-" + std::to_string(t)}};
        if (cluster.owner_of(store::redis::cluster::key_slot(ledger_key(b))) != taken) return b;
    }
}

TEST(RlqsStoreKinds, OnARedisClusterEachBucketStaysWithinTheBoundAndFollowsAMigratingSlot) {
    RedisCluster cluster(3);
    const QuotaBucket a{{"kind", "api"}, {"tenant", "a"}};
    const QuotaBucket b = bucket_on_another_primary(cluster, a);
    const int slot_a = store::redis::cluster::key_slot(ledger_key(a));
    const int owner_a = cluster.owner_of(slot_a);

    Fleet fleet(cluster.url());
    const auto on_a = fleet.clients(a, {60, 30, 10});
    const auto on_b = fleet.clients(b, {40, 20});
    const std::int64_t started = now_ms();
    run_windows(2, window_ms);
    expect_shared(on_a, started, "bucket a");
    expect_shared(on_b, started, "bucket b");
    // Each ledger on the primary owning its slot: three Envoys live in a's, two in b's.
    EXPECT_EQ(cluster.integer(owner_a, {"HLEN", ledger_key(a)}), 2 + 3);
    const int owner_b = cluster.owner_of(store::redis::cluster::key_slot(ledger_key(b)));
    EXPECT_EQ(cluster.integer(owner_b, {"HLEN", ledger_key(b)}), 2 + 2);

    // a's slot moved as an operator does it. While it migrates (its hash already on the new
    // node, the slot still the old one's) every report of a meets ASK and is sent again behind
    // ASKING; once the move is finished, MOVED, and the slot's calls go to the new owner.
    const int to = (owner_a + 1) % 3;
    cluster.begin_migration(slot_a, owner_a, to);
    cluster.migrate_keys(slot_a, owner_a, to);
    const std::int64_t migrating = now_ms();
    run_windows(1, window_ms);
    // Not made again at the old owner (which answers ASK, not 0, to EXISTS of it now).
    EXPECT_EQ(cluster.integer(owner_a, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot_a)}), 0);
    expect_shared(on_a, migrating - window_ms, "bucket a, slot migrating (ASK)");
    cluster.finish_migration(slot_a, to);
    const std::int64_t moved = now_ms();
    EXPECT_TRUE(wait_until([&] { return cluster.integer(to, {"HLEN", ledger_key(a)}) == 2 + 3; },
                           std::chrono::milliseconds(10'000)));
    run_windows(2, window_ms);
    // From the window of the move on: a report the old owner answers with MOVED is sent again
    // to the new one within its deadline, so the budget is still spent (not the fallback).
    expect_shared(on_a, moved - window_ms, "bucket a, slot moved");
    expect_shared(on_b, moved - window_ms, "bucket b, slot moved");
    fleet.leave();
}

TEST(RlqsStoreKinds, ThroughSentinelTheFleetSharesThePrimarysLedgerAndFollowsAFailover) {
    // No diskless-sync delay (5 s by default): the replica syncs at once.
    RedisServer primary("", {"--repl-diskless-sync-delay", "0"});
    RedisServer standby("", {"--replicaof", "127.0.0.1", std::to_string(primary.port())});
    ASSERT_TRUE(wait_until([&] {
        return standby.command({"INFO", "replication"}).find("master_link_status:up") != std::string::npos;
    }, std::chrono::milliseconds(10'000))) << "the replica never synced";
    RedisSentinel sentinel("rlqs", primary.port());
    // The sentinel learns of the replica from the primary's INFO; it can only promote a known one.
    ASSERT_TRUE(wait_until([&] {
        return sentinel.command({"SENTINEL", "replicas", "rlqs"}).find(std::to_string(standby.port())) !=
               std::string::npos;
    }, std::chrono::milliseconds(15'000))) << "the sentinel never saw the replica";

    const QuotaBucket a{{"kind", "api"}, {"tenant", "a"}};
    Fleet fleet(sentinel.url());
    const auto on_a = fleet.clients(a, {60, 30, 10});
    const std::int64_t started = now_ms();
    run_windows(2, window_ms);
    expect_shared(on_a, started, "sentinel");
    EXPECT_EQ(primary.integer({"HLEN", ledger_key(a)}), 2 + 3);

    // The primary dies; once the sentinel has promoted the standby, both replicas' ledgers
    // follow it (each logs that its Redis answers again) and the fleet shares as before.
    primary.kill_hard();
    const std::string promoted = "127.0.0.1:" + std::to_string(standby.port());
    ASSERT_TRUE(wait_until([&] { return sentinel.master_address() == promoted; }, std::chrono::milliseconds(25'000)))
        << "the sentinel never promoted the replica";
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_FALSE(fleet.replica(i).process().wait_for_log("answers again", std::chrono::milliseconds(10'000)).empty())
            << fleet.replica(i).process().log();
    }
    const std::int64_t followed = now_ms();
    run_windows(2, window_ms);
    expect_shared(on_a, followed, "sentinel, after the failover");
    EXPECT_EQ(standby.integer({"HLEN", ledger_key(a)}), 2 + 3);
    fleet.leave();
}

}  // namespace
}  // namespace ratelimitd::test::grpc_rlqs_store_kinds_test
