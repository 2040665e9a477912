// Admin endpoints: the loaded registry, the state of one key, and resetting one key.
#pragma once

#include "ratelimitd/http/request_tokens.hpp"
#include "ratelimitd/http/types.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::http {

/// /v1/policies, /v1/peek and /v1/reset.
bool is_admin_path(std::string_view path) noexcept;

/// Answers an admin request:
///   GET  /v1/policies                        the registry in force, with the file's SHA-256
///                                            and load time
///   GET  /v1/peek?policy=&tenant=&scope=     the key's state, nothing consumed
///   POST /v1/reset {"policy","tenant","scope"}  forget the key's state
/// Access per admin_access: 401 with no hint about the token when it is wrong or missing; 403
/// admin_disabled (naming RATELIMITD_ADMIN_TOKEN) for a non-loopback peer when no token is
/// set. `peer` is the direct TCP peer's address. Never throws.
boost::asio::awaitable<Response> handle_admin(const Request& req, std::string_view path,
                                              service::CheckService& service,
                                              const std::optional<std::string>& token,
                                              std::string_view peer);

// bearer_matches (the token check) is in request_tokens.hpp.

/// Who may call an admin endpoint.
enum class AdminAccess { allowed, unauthorized, disabled };

/// With a token: allowed when `authorization` carries it, else unauthorized. Without one:
/// allowed only for a loopback `peer` (is_loopback_address), else disabled, so a sidecar
/// listening on 0.0.0.0 without a token cannot be reset from the network.
AdminAccess admin_access(const std::optional<std::string>& token, std::string_view authorization,
                         std::string_view peer) noexcept;

}  // namespace ratelimitd::http
