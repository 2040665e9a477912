// A layered check whose keys lie in several hash slots of a Redis Cluster (ClusterStore's
// apply_all hands it over when one script cannot hold every key).
#pragma once

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/redis/cluster/cluster_node.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "ratelimitd/store/redis/value.hpp"
#include "ratelimitd/store/store.hpp"

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ratelimitd::store::redis::cluster {

/// What a cross-slot check needs of its store: calls routed to a slot's owner (redirects
/// followed), peeks, the store deadline, and the refund counters the metrics read.
struct ClusterCalls {
    using clock = NodeClient::clock;
    /// One try of a call on `node`; `asking` after an ASK redirect.
    using Attempt = std::function<boost::asio::awaitable<result<Value>>(ClusterNode& node, bool asking)>;

    std::function<boost::asio::awaitable<result<Value>>(int slot, clock::time_point deadline, Attempt attempt)> routed;
    std::function<boost::asio::awaitable<result<check::Verdict>>(const policy::Policy& p, std::string key)> peek;
    std::chrono::milliseconds timeout{0};
    std::atomic<std::uint64_t>* refunds = nullptr;
    std::atomic<std::uint64_t>* refunds_failed = nullptr;
};

/// Decides one layered check slot group by slot group, in ascending slot order (a fixed order
/// every sidecar shares): each group is one lua/multi.lua call on its node, atomic there. When
/// a group denies (or fails), the groups charged before it get their charges back through
/// lua/refund.lua, and the groups after it are only peeked. The guarantee (docs/stores.md
/// "Layered limits on a cluster"): no limit ever admits more than it would alone; a concurrent
/// check may be denied while a refund is in flight; a refund that cannot be sent (its node
/// died) leaves the charge to be repaid by time. One object per check; run() once.
class CrossSlotCheck {
public:
    CrossSlotCheck(ClusterCalls cluster, std::vector<LimitCheck> checks);

    boost::asio::awaitable<result<check::Verdict>> run();

private:
    using clock = ClusterCalls::clock;

    /// The checks of one hash slot, and the arguments their charge was sent with.
    struct SlotGroup {
        int slot = 0;
        std::vector<std::size_t> members;  ///< indexes into checks_
        std::vector<CheckArgs> sent;       ///< as sent by the last attempt (members, leases)
    };

    /// One group's lua/multi.lua on its node; `g.sent` keeps what a charge sent.
    boost::asio::awaitable<result<check::Verdict>> charge_group(SlotGroup& g, clock::time_point deadline);
    /// lua/refund.lua for groups [0, charged); their windows become the state after it.
    boost::asio::awaitable<void> refund_groups(std::size_t charged, clock::time_point started);
    /// Peeks the checks of groups [from, end), never asked because an earlier group denied.
    boost::asio::awaitable<void> peek_groups(std::size_t from);
    /// The checks of `g`, in its order.
    std::vector<LimitCheck> checks_of(const SlotGroup& g) const;
    /// Every check is Part::charge (envoyproxy/ratelimit's accounting): each group is charged
    /// whatever the others answer, and nothing is given back.
    bool charged_whatever() const;

    ClusterCalls cluster_;
    std::vector<LimitCheck> checks_;
    std::vector<SlotGroup> groups_;
    check::WindowStates windows_;
};

}  // namespace ratelimitd::store::redis::cluster
