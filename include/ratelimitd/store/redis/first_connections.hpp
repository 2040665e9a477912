// Start-up's short wait for a remote store's first connections.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace ratelimitd::store::redis {

/// Waits up to `limit` until `connected()` (polled every 10 ms), so the first checks do not
/// fail open needlessly. A Redis that is down does not stop the service from starting
/// (/readyz says 503): the wait ends with a warning naming `describe()` (asked after the wait,
/// when a cluster knows its primaries). Returns whether it connected.
bool await_first_connections(const std::function<bool()>& connected, const std::function<std::string()>& describe,
                             std::chrono::milliseconds limit = std::chrono::seconds(3));

}  // namespace ratelimitd::store::redis
