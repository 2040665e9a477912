// Admin endpoints for the Envoy rate limit service's counters: the state of one descriptor's
// counter, and resetting it, named by domain and descriptor as a ShouldRateLimit call names
// them (docs/envoy-config.md, "Admin").
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/http/types.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include <string>
#include <string_view>

namespace ratelimitd::http {

/// The query of /v1/envoy/peek and /v1/envoy/reset: the first `domain=D`, then every other
/// parameter, in order, one entry `key=value` of the one descriptor (percent-decoded, '+' a
/// space), e.g. "domain=edge&remote_address=10.0.0.1&path=%2Flogin". A malformed escape is
/// an invalid_request; the planner checks the rest.
result<policy::RlsRequest> parse_envoy_state_query(std::string_view query);

// Their handlers (GET /v1/envoy/peek, POST /v1/envoy/reset) are in handlers.hpp: each plans
// the descriptor on the road as a ShouldRateLimit call of its own would (road::Ask::envoy_peek,
// road::Ask::envoy_reset). A reset's audit entry keeps only the descriptor's keys and the
// counter key's hash: its values may be a request header's (an API key).

}  // namespace ratelimitd::http
