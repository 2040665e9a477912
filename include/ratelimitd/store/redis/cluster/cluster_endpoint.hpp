// Where the cluster store starts looking: parsed from redis-cluster://[[user]:password@]host:port[,host:port...].
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::store::redis::cluster {

/// The seed nodes; each carries the credentials, and db 0 (a cluster has no other).
struct ClusterEndpoint {
    std::vector<Endpoint> seeds;

    /// The URL without the password, safe for logs: "redis-cluster://127.0.0.1:7000,127.0.0.1:7001".
    [[nodiscard]] std::string describe() const;
};

/// True when `url` starts with redis-cluster://.
bool is_cluster_url(std::string_view url) noexcept;

/// Parses redis-cluster://[[user]:password@]host:port[,host:port...]; IPv6 hosts in brackets,
/// percent-escapes in the password decoded, the port defaults to 6379. A "/db" other than 0
/// is refused (Redis Cluster has only db 0). Fails with invalid_request naming what is wrong,
/// never echoing the password.
result<ClusterEndpoint> parse_cluster_url(std::string_view url);

}  // namespace ratelimitd::store::redis::cluster
