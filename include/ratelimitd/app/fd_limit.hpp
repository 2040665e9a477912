// Makes room in the open-file limit for both listeners' connections, or shares what there is.
#pragma once

#include <cstddef>

namespace ratelimitd::app {

/// Descriptors kept aside beyond the client connections: the listeners, Redis connections,
/// log and epoll descriptors, a connection being refused.
inline constexpr std::size_t reserved_descriptors = 64;
/// Kept aside besides when the gRPC server runs: its own epoll, wake-up and timer descriptors.
inline constexpr std::size_t grpc_reserved_descriptors = 32;

/// How many connections each listener may hold at once.
struct ConnectionBudget {
    std::size_t http = 0;  ///< the HTTP server's max_connections in force
    std::size_t grpc = 0;  ///< the gRPC listener's cap in force; 0: no gRPC listener

    bool operator==(const ConnectionBudget&) const = default;
};

/// Both caps when `available` descriptors hold them; else each listener keeps up to half of
/// `available` and what one leaves unused goes to the other, so neither listener's
/// connections can take the descriptors the other needs. A listener asked for gets at least
/// 1; `grpc` 0 means no gRPC listener. Pure.
ConnectionBudget share_descriptors(std::size_t available, std::size_t http, std::size_t grpc);

/// Raises the soft RLIMIT_NOFILE up to the hard limit when `http` plus `grpc` connections
/// plus the reserved descriptors would not fit (as many servers do at start). When even the
/// hard limit is too low, shares the descriptors it allows (share_descriptors) and warns
/// naming the caps in force: a connection over its listener's share is then refused (503 on
/// HTTP, closed at once on gRPC) instead of failing to be accepted. Never throws.
ConnectionBudget budget_connections(std::size_t http, std::size_t grpc);

}  // namespace ratelimitd::app
