// A Redis Cluster of private redis-server processes for a test, and the operator's moves on it.
#pragma once

#include "support/child.hpp"
#include "support/redis_server.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace ratelimitd::test {

/// How a RedisCluster is set up.
struct RedisClusterOptions {
    int primaries = 3;
    /// Replicas per primary (redis-cli --cluster create --cluster-replicas N).
    int replicas_per_primary = 0;
    /// cluster-node-timeout; 0 keeps Redis's default (15 s). A failover test wants ~1 s.
    std::chrono::milliseconds node_timeout{0};
    /// With a password every node has requirepass and masterauth, url() carries it and
    /// command() authenticates first.
    std::string password;
    /// cluster-require-full-coverage: with yes (Redis's default) every node answers CLUSTERDOWN
    /// while any slot is uncovered (a failed primary not yet replaced).
    bool require_full_coverage = true;
};

/// A Redis Cluster of redis-server processes on free loopback ports, created with
/// `redis-cli --cluster create`: nodes 0..primaries-1 are the primaries, the rest their
/// replicas. The constructor returns once every node reports cluster_state:ok, agrees on the
/// owner of every slot, and every replica's link to its primary is up.
class RedisCluster {
public:
    explicit RedisCluster(int primaries = 3, int replicas_per_primary = 0)
        : RedisCluster(RedisClusterOptions{primaries, replicas_per_primary, {}, {}}) {}
    explicit RedisCluster(const RedisClusterOptions& options);
    /// "redis-cluster://[:password@]127.0.0.1:P1,127.0.0.1:P2,..." (the primaries only).
    std::string url() const;
    /// Every node, primaries first, replicas after.
    int size() const { return static_cast<int>(ports_.size()); }
    unsigned short port(int node) const { return ports_[static_cast<size_t>(node)]; }
    std::string command(int node, const std::vector<std::string>& argv) const {
        return redis_command(port(node), password_, argv);
    }
    long long integer(int node, const std::vector<std::string>& argv) const { return std::stoll(command(node, argv)); }
    /// The node (index) that owns `slot`, as the first live node's CLUSTER NODES says.
    int owner_of(int slot) const;
    /// The owner (node index) of every slot, -1 where none, from one CLUSTER NODES.
    std::vector<int> owners() const;
    /// The node (index) replicating `primary`, as `primary`'s CLUSTER NODES says; -1 when none.
    int replica_of(int primary) const;
    /// True when `node` says ROLE master.
    bool is_primary(int node) const;
    /// SIGKILL one node; later calls that pick "a live node" skip it.
    void kill(int node);
    /// Moving a slot from one node to another, in the steps an operator (or redis-cli --cluster
    /// reshard) takes: IMPORTING/MIGRATING, MIGRATE every key, then SETSLOT NODE everywhere.
    void begin_migration(int slot, int from, int to) const;
    void migrate_keys(int slot, int from, int to) const;
    void finish_migration(int slot, int to) const;

private:
    /// Starts every node (cluster mode, not yet joined) in `dir` and waits until each answers PING.
    void start_nodes(const RedisClusterOptions& options, const std::string& dir);
    /// The argv of one node on `port`, its cluster bus on `bus`.
    std::vector<std::string> node_argv(const RedisClusterOptions& options, const std::string& dir,
                                       unsigned short port, unsigned short bus) const;
    /// Joins the nodes with redis-cli --cluster create; the first `primaries` become primaries.
    void create(const RedisClusterOptions& options, const std::string& dir) const;
    /// True once every node sees the cluster ok with the same slots and every replica is linked.
    bool settled(const RedisClusterOptions& options) const;
    std::string node_id(int node) const;
    int index_of_port(unsigned short port) const;
    int first_live() const;
    int primaries_ = 0;
    std::string password_;
    std::vector<unsigned short> ports_;
    std::vector<Child> nodes_;
    std::vector<bool> killed_;
};

}  // namespace ratelimitd::test
