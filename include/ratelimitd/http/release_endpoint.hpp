// POST /v1/release: a worker hands back the concurrency slot its check's lease holds.
#pragma once

#include "ratelimitd/http/types.hpp"
#include "ratelimitd/road/road.hpp"

#include <boost/asio/awaitable.hpp>

namespace ratelimitd::http {

/// POST /v1/release {"policy","tenant","scope","lease"} (docs/leases.md), read by the one
/// body reader (a field given twice: 400): 200 with "released": true and the state after it
/// (limit, remaining, reset, reset_after; X-RateLimit-* headers) when the lease was live and
/// is freed; 200 with "released": false and no state when it was unknown, already released or
/// expired (a retried release is harmless, and a guessed lease learns nothing). A lease that
/// is not 32 lower-case hex digits, or a policy that is not a concurrency policy: 400
/// invalid_request. A store that cannot answer: 503. Never throws.
boost::asio::awaitable<Response> answer_release(const Request& req, const road::Road& road);

}  // namespace ratelimitd::http
