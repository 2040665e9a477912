// Admin endpoints: who may call them (the handlers of /v1/policies, /v1/peek and /v1/reset,
// in admin_endpoints.cpp, are declared in handlers.hpp).
#pragma once

#include "ratelimitd/http/request_tokens.hpp"
#include "ratelimitd/http/types.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::http {

// The paths, methods and access of these endpoints are rows of the endpoint table
// (endpoints.hpp); the router checks access and methods before it calls a handler here.

// Their handlers (GET /v1/policies, GET /v1/peek, POST /v1/reset) are in handlers.hpp.

// bearer_matches (the token check) is in request_tokens.hpp.

/// Who may call an admin endpoint.
enum class AdminAccess { allowed, unauthorized, disabled };

/// With a token: allowed when `authorization` carries it, else unauthorized. Without one:
/// allowed only for a loopback `peer` (is_loopback_address), else disabled, so a sidecar
/// listening on 0.0.0.0 without a token cannot be reset from the network.
AdminAccess admin_access(const std::optional<std::string>& token, std::string_view authorization,
                         std::string_view peer) noexcept;

/// The operator's acts admin_access guards, named in a refusal's detail.
enum class AdminAct {
    admin_endpoint,  ///< a call to an admin endpoint
    give_back,       ///< a report with a negative cost (a refund)
};

/// The answer to a caller admin_access refuses: 401 with no hint about the token when it is
/// wrong or missing; 403 admin_disabled (naming RATELIMITD_ADMIN_TOKEN) for a non-loopback
/// peer when no token is set. The detail names `act` and the rule. Nothing when the caller
/// is allowed. `peer` is the direct TCP peer's address.
std::optional<Response> admin_refusal(const Request& req, const std::optional<std::string>& token,
                                      std::string_view peer, AdminAct act = AdminAct::admin_endpoint);

}  // namespace ratelimitd::http
