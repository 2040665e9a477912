// The Redis Cluster store: one NodeClient (pipelined pool) per node, each call routed to the
// primary owning its key's slot, MOVED/ASK followed.
#pragma once

#include "ratelimitd/store/redis/cluster/cluster_endpoint.hpp"
#include "ratelimitd/store/redis/cluster/cluster_node.hpp"
#include "ratelimitd/store/redis/cluster/cross_slot_check.hpp"
#include "ratelimitd/store/redis/cluster/key_slot.hpp"
#include "ratelimitd/store/redis/cluster/slot_map.hpp"
#include "ratelimitd/store/redis/coalescer.hpp"
#include "ratelimitd/store/store.hpp"

#include <boost/asio/steady_timer.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ratelimitd::store::redis::cluster {

/// Redirects followed since construction (read by the metrics scrape on another thread).
struct RedirectCounts {
    std::uint64_t moved = 0;
    std::uint64_t ask = 0;
};

/// The Redis Cluster store of one server thread.
///
/// The slot map comes from CLUSTER SLOTS, asked of any known node (seeds first) at start, after
/// every MOVED and after a node stops answering. Each call goes to the primary owning its key's
/// slot through that node's ClusterNode (its own connections, breaker, script loading and
/// batches of one slot). A MOVED reply updates the slot and
/// retries on the named node; ASK retries once there behind ASKING; TRYAGAIN and CLUSTERDOWN are
/// retried shortly; all within the one store deadline of the call. A layered check whose keys
/// lie in several slots is decided slot by slot, with refunds (CrossSlotCheck).
/// @par Thread Safety
/// Used only on the executor given at construction, except the members marked thread-safe.
class ClusterStore final : public Store {
public:
    ClusterStore(boost::asio::any_io_executor ex, ClusterEndpoint endpoint, std::chrono::milliseconds timeout,
                 std::string instance_id, int connections_per_node = 2, Coalescing coalescing = {},
                 StateLayout layout = StateLayout::string);
    ~ClusterStore() override;

    boost::asio::awaitable<result<check::Verdict>> apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) override;
    boost::asio::awaitable<result<check::Verdict>> apply_all(std::vector<LimitCheck> checks) override;
    boost::asio::awaitable<result<check::Verdict>> peek(const policy::Policy& p, std::string key) override;
    boost::asio::awaitable<result<bool>> reset(std::string key) override;
    boost::asio::awaitable<result<check::Verdict>> release(const policy::Policy& p, std::string key,
                                                           std::string lease) override;
    /// True when the slot map is known and every primary in it answers PING.
    boost::asio::awaitable<bool> ready() override;
    /// "redis-cluster://127.0.0.1:7000,127.0.0.1:7001 (3 primaries)". Thread-safe.
    std::string describe() const override;

    /// Called each time a connection to any node is set up again after a loss.
    void on_reconnected(std::function<void()> hook);
    /// Stops every node's connections (shutdown).
    void stop();

    /// Thread-safe reads for start-up and the metrics scrape.
    /// The slot map is known and every primary has a connection set up.
    [[nodiscard]] bool any_ready() const;
    /// Some node's circuit breaker is open.
    [[nodiscard]] bool breaker_open() const;
    [[nodiscard]] std::uint64_t batches_sent() const;
    [[nodiscard]] std::uint64_t checks_batched() const;
    /// Refunds sent for cross-slot layered checks that a later slot denied, and those that
    /// failed (their charge stays until time repays it).
    [[nodiscard]] std::uint64_t refunds() const noexcept { return refunds_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t refunds_failed() const noexcept {
        return refunds_failed_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] RedirectCounts redirects() const noexcept {
        return {moved_.load(std::memory_order_relaxed), ask_.load(std::memory_order_relaxed)};
    }

private:
    using clock = NodeClient::clock;
    using Attempt = ClusterCalls::Attempt;

    /// Runs `attempt` on the owner of `slot`, following redirects until `deadline`.
    boost::asio::awaitable<result<Value>> routed(int slot, clock::time_point deadline, Attempt attempt);
    /// PUBLISH of a reset (or refunded) `key` of `slot` on its reset channel; a failure is
    /// logged, the change stands.
    boost::asio::awaitable<void> publish_reset(int slot, const std::string& key, clock::time_point deadline);
    /// A layered check over several slots: a CrossSlotCheck over this store's routed calls.
    boost::asio::awaitable<result<check::Verdict>> apply_cross_slot(std::vector<LimitCheck> checks);
    /// The node at `address`, made (and connecting) on first use.
    ClusterNode& node_at(const NodeAddress& address);
    /// Asks CLUSTER SLOTS again soon, unless a refresh is running or ran a moment ago.
    void request_refresh();
    boost::asio::awaitable<void> refresh();
    /// Applies a parsed CLUSTER SLOTS reply.
    void install(const std::vector<SlotRange>& ranges);

    boost::asio::any_io_executor executor_;
    ClusterEndpoint endpoint_;
    std::chrono::milliseconds timeout_;
    std::string instance_id_;
    int connections_per_node_;
    Coalescing coalescing_;
    StateLayout layout_;
    std::function<void()> on_reconnected_;
    bool stopped_ = false;

    // Written on the executor only; nodes_ and primaries_ also read by the scrape, under mu_.
    mutable std::mutex mu_;
    std::map<std::string, std::unique_ptr<ClusterNode>> nodes_;  // by "host:port"
    std::vector<ClusterNode*> primaries_;                       // distinct owners in slots_
    std::array<ClusterNode*, slot_count> slots_{};              // nullptr: owner unknown
    std::atomic<bool> map_known_{false};
    std::atomic<int> primary_count_{0};

    bool refreshing_ = false;
    clock::time_point last_refresh_{};
    boost::asio::steady_timer refresh_timer_;
    bool layered_warned_ = false;

    std::atomic<std::uint64_t> moved_{0};
    std::atomic<std::uint64_t> ask_{0};
    std::atomic<std::uint64_t> refunds_{0};
    std::atomic<std::uint64_t> refunds_failed_{0};
};

}  // namespace ratelimitd::store::redis::cluster
