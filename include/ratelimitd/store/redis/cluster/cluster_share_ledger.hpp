// RLQS shares kept in a Redis Cluster by lua/rlqs_share.lua: each bucket's call sent to the
// primary owning its hash's slot, one pipeline per node of a report.
#pragma once

#include "ratelimitd/core/warning_gate.hpp"
#include "ratelimitd/store/redis/cluster/cluster_endpoint.hpp"
#include "ratelimitd/store/redis/cluster/slot_map.hpp"
#include "ratelimitd/store/share_ledger.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {
class BlockingClient;
}

namespace ratelimitd::store::redis::cluster {

/// The slot map comes from CLUSTER SLOTS (parse_cluster_slots), asked of a known primary or a
/// seed before the first report, after a MOVED, a CLUSTERDOWN or a node that does not answer
/// (at most once per refresh_interval). A report's buckets are grouped by the primary owning
/// their slot; each group is one pipeline of EVALSHA on a pooled blocking connection to that
/// node. A MOVED reply retries the bucket on the named node, an ASK retries it there behind
/// ASKING, at most max_redirects times; the script is atomic per bucket, so a redirected call
/// changed nothing. Anything else (TRYAGAIN, CLUSTERDOWN, a node down, past the deadline) and
/// take() gives up: the report gets its rules' fallbacks, as with one Redis.
/// @par Thread Safety
/// take() may be called from any thread; each call uses its connections alone.
class ClusterShareLedger final : public ShareLedger {
public:
    static constexpr std::size_t pooled_per_node = 4;
    static constexpr int max_redirects = 2;  ///< MOVED then ASK: the longest chain a migration makes
    static constexpr std::chrono::milliseconds refresh_interval{100};
    static constexpr std::chrono::seconds warning_interval{10};

    ClusterShareLedger(ClusterEndpoint endpoint, std::chrono::milliseconds timeout);
    ~ClusterShareLedger() override;

    std::optional<std::vector<ShareGrant>> take(const std::vector<ShareAsk>& asks) override;

private:
    using clock = std::chrono::steady_clock;
    /// One bucket's call still to make: where, and whether behind ASKING.
    struct Pending {
        std::size_t ask;
        NodeAddress node;
        bool asking = false;
    };
    /// What take() has so far: the grants, and the calls redirected to the next round.
    struct Round {
        std::vector<std::optional<ShareGrant>> grants;
        std::vector<Pending> next;
    };

    /// Reads the slot map again when it is stale and was not read a moment ago; false when
    /// no owner is known for some slot after it.
    bool refresh_if_stale(clock::time_point deadline);
    /// The owner of every ask's slot, or nullopt when one is not known.
    std::optional<std::vector<Pending>> route(const std::vector<ShareAsk>& asks);
    /// The calls of one node, sent in one pipeline; false (logged) when they cannot all be read.
    bool send(const NodeAddress& node, bool asking, const std::vector<std::size_t>& which,
              const std::vector<ShareAsk>& asks, Round& round);
    /// One reply read into `round`; false when it is neither a grant nor a redirect.
    bool read_reply(const Value& reply, std::size_t ask, const std::vector<ShareAsk>& asks, Round& round);
    /// The replies of `which` on `client` (ASKING before each call when `asking`), NOSCRIPT
    /// ones sent again as EVAL.
    std::optional<std::vector<Value>> call(BlockingClient& client, bool asking, const std::vector<std::size_t>& which,
                                           const std::vector<ShareAsk>& asks, std::string& why);
    void install(const std::vector<SlotRange>& ranges);
    std::unique_ptr<BlockingClient> client_for(const NodeAddress& node, std::string& why);
    void give_back(const NodeAddress& node, std::unique_ptr<BlockingClient> client);
    void mark_stale();
    void warn(const std::string& why);

    const ClusterEndpoint endpoint_;
    const std::chrono::milliseconds timeout_;
    WarningGate warnings_{warning_interval};
    std::mutex mutex_;  // guards everything below
    std::vector<NodeAddress> owners_;       ///< distinct primaries, indexed by slot_owner_
    std::vector<std::uint16_t> slot_owner_;  ///< per slot, an index into owners_, or unowned
    bool stale_ = true;
    clock::time_point last_refresh_{};
    std::map<std::string, std::vector<std::unique_ptr<BlockingClient>>> idle_;  ///< by "host:port"
};

}  // namespace ratelimitd::store::redis::cluster
