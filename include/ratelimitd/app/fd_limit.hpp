// Makes room in the open-file limit for max_connections, or says that there is none.
#pragma once

#include <cstddef>

namespace ratelimitd::app {

/// Descriptors kept aside beyond the client connections: the listener, Redis connections,
/// log and epoll descriptors.
inline constexpr std::size_t reserved_descriptors = 64;

/// Raises the soft RLIMIT_NOFILE up to the hard limit when `max_connections` plus
/// reserved_descriptors would not fit (as many servers do at start), and logs a warning when
/// even the hard limit is too low: connections beyond it would fail to be accepted instead
/// of being refused with 503. Never throws.
void ensure_descriptors_for(std::size_t max_connections);

}  // namespace ratelimitd::app
