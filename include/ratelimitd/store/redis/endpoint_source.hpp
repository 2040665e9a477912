// Where a connection should connect right now, when that can change (Sentinel failover).
#pragma once

#include "ratelimitd/store/redis/endpoint.hpp"

#include <optional>
#include <string>

namespace ratelimitd::store::redis {

/// A moving endpoint: a Connection given one asks it before every (re)connect instead of
/// keeping the address it was built with.
/// @par Thread Safety
/// Every member may be called from any thread.
class EndpointSource {
public:
    virtual ~EndpointSource() = default;
    /// The endpoint to connect to now (host, port, credentials, db), or nullopt when none is
    /// known (no sentinel has named a primary yet): the connection then fails its commands
    /// with store_unavailable and asks again after its backoff.
    [[nodiscard]] virtual std::optional<Endpoint> current() const = 0;
    /// What the store is, for logs; never holds a password.
    [[nodiscard]] virtual std::string describe() const = 0;
    /// A connection saw a sign that `current()` is stale (a READONLY reply): look again soon.
    virtual void suspect() = 0;
};

}  // namespace ratelimitd::store::redis
