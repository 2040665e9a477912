// Admin endpoints for the Envoy rate limit service's counters: the state of one descriptor's
// counter, and resetting it, named by domain and descriptor as a ShouldRateLimit call names
// them (docs/envoy-config.md, "Admin").
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/http/types.hpp"
#include "ratelimitd/policy/rls_request.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::http {

/// The query of /v1/envoy/peek and /v1/envoy/reset: the first `domain=D`, then every other
/// parameter, in order, one entry `key=value` of the one descriptor (percent-decoded, '+' a
/// space), e.g. "domain=edge&remote_address=10.0.0.1&path=%2Flogin". A malformed escape is
/// an invalid_request; the planner checks the rest.
result<policy::RlsRequest> parse_envoy_state_query(std::string_view query);

/// GET /v1/envoy/peek?domain=&KEY=VALUE...: the rule the descriptor reaches and its counter's
/// state, nothing consumed. Never throws.
boost::asio::awaitable<Response> answer_envoy_peek(const Request& req, service::CheckService& service);

/// What an Envoy reset named and came to, for the audit trail. A descriptor's values may be a
/// request header's (an API key), so only its keys and the counter key's hash are kept.
struct EnvoyResetRecord {
    std::string domain;
    std::string rule;                  ///< the rule's label, when the descriptor reached one
    std::vector<std::string> entry_keys;
    std::string key_hash;              ///< first 16 hex digits of the counter key's SHA-256
    std::string outcome;               ///< "reset", "nothing_to_reset", "not_limited" or an error code
};

/// POST /v1/envoy/reset?domain=&KEY=VALUE...: forget that counter. Never throws. Fills
/// `record` (when given).
boost::asio::awaitable<Response> answer_envoy_reset(const Request& req, service::CheckService& service,
                                                    EnvoyResetRecord* record = nullptr);

}  // namespace ratelimitd::http
