// envoyproxy/ratelimit's `POST /json` between the HTTP server (which serves the path) and the
// gRPC module (whose codec reads and writes the protobuf JSON): declared here, on the road's
// side, so neither module links the other.
#pragma once

#include "ratelimitd/road/road.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace ratelimitd::road {

/// What `POST /json` answers (envoyproxy/ratelimit's HTTP form of ShouldRateLimit).
struct RlsJsonAnswer {
    unsigned status = 200;  ///< 200 OK, 429 OVER_LIMIT, 400 a malformed call, 500 UNKNOWN
    std::string body;       ///< RateLimitResponse as protobuf JSON, or the error's text
};

/// Decides one `POST /json` body on the thread's road (the gRPC module provides it: its codec).
using RlsJson = std::function<boost::asio::awaitable<RlsJsonAnswer>(const Road&, std::string_view body)>;

}  // namespace ratelimitd::road
