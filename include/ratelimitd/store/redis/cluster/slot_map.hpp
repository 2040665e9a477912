// The cluster's slot -> primary table, read from a CLUSTER SLOTS reply.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/redis/value.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::store::redis::cluster {

/// A node as the cluster names it, "host:port".
struct NodeAddress {
    std::string host;
    int port = 0;

    /// "127.0.0.1:7000", "[::1]:7000".
    [[nodiscard]] std::string str() const;
    friend bool operator==(const NodeAddress&, const NodeAddress&) = default;
};

/// Slots first..last (inclusive) are served by `primary`.
struct SlotRange {
    int first = 0;
    int last = 0;
    NodeAddress primary;
};

/// Reads a CLUSTER SLOTS reply: one [first, last, [host, port, id, ...], replicas...] entry
/// per range. An empty host means "the node that answered", which is `asked_host`.
/// Fails with bad_script_reply naming what is malformed; ranges outside 0..16383 included.
result<std::vector<SlotRange>> parse_cluster_slots(const Value& reply, std::string_view asked_host);

/// "host:port" (IPv6 hosts may be bare, as in MOVED replies: the port follows the last ':').
/// Fails with invalid_request.
result<NodeAddress> parse_node_address(std::string_view text);

/// A redirect or transient cluster error in place of a command's reply.
struct Redirect {
    enum class Kind { none, moved, ask, try_again, cluster_down };
    Kind kind = Kind::none;
    int slot = -1;        ///< moved / ask
    NodeAddress target;   ///< moved / ask
};

/// Classifies an error reply: "MOVED 3999 127.0.0.1:6381", "ASK 3999 127.0.0.1:6381",
/// "TRYAGAIN ...", "CLUSTERDOWN ..."; anything else (or a malformed MOVED/ASK) is Kind::none.
Redirect parse_redirect(std::string_view error);

}  // namespace ratelimitd::store::redis::cluster
