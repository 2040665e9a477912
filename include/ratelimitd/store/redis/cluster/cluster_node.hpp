// One node of a Redis Cluster as ClusterStore uses it: its client and its coalescing queue.
#pragma once

#include "ratelimitd/store/redis/batch_sender.hpp"
#include "ratelimitd/store/redis/node_client.hpp"
#include "ratelimitd/store/redis/script_args.hpp"

#include <chrono>
#include <string>

namespace ratelimitd::store::redis::cluster {

/// The NodeClient of one node (its connections, breaker and script loading), its own
/// BatchSender (batches of one slot) and its own sliding-log members.
/// @par Thread Safety
/// Used only on the store's executor, except the counters and breaker_open().
struct ClusterNode {
    ClusterNode(boost::asio::any_io_executor ex, Endpoint endpoint, std::chrono::milliseconds timeout,
                int connections, Coalescing coalescing, std::string instance_id, StateLayout layout)
        : client(std::move(ex), std::move(endpoint), timeout, connections),
          batches(client, coalescing),
          members(std::move(instance_id), layout) {}

    ~ClusterNode() { stop(); }
    ClusterNode(const ClusterNode&) = delete;
    ClusterNode& operator=(const ClusterNode&) = delete;

    /// Stops the connections and fails the queued checks.
    void stop() {
        client.stop();
        batches.stop();
    }

    NodeClient client;
    BatchSender batches;
    MemberSource members;
};

}  // namespace ratelimitd::store::redis::cluster
