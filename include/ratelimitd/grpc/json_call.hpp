// envoyproxy/ratelimit's `POST /json`: a RateLimitRequest in protobuf JSON,
// decided by the same road as ShouldRateLimit (road::Road::decide, Ask::rls) and answered
// with the RateLimitResponse in JSON.
#pragma once

#include "ratelimitd/grpc/request_codec.hpp"
#include "ratelimitd/grpc/response_headers.hpp"
#include "ratelimitd/road/rls_json.hpp"
#include "ratelimitd/stats/erl_stats.hpp"

namespace ratelimitd::rls {

/// The handler the HTTP router's rls_json option takes: the body parsed as protobuf
/// JSON (unknown fields refused, as envoyproxy/ratelimit's protojson does),
/// checked against `limits` like a gRPC call, decided, and answered 200 (OK),
/// 429 (OVER_LIMIT) or 500 (UNKNOWN) with the response in protobuf JSON; 400
/// "Bad Request" for a body that is no valid call. `erl_stats`: ERL mode's stats, counted
/// per call when set (it outlives the handler).
road::RlsJson make_rls_json(RequestLimits limits = {}, ResponseHeaders headers = HeaderSet::ietf,
                            stats::ErlStats* erl_stats = nullptr);

}  // namespace ratelimitd::rls
