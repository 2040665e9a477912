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
/// When `token` is set, each needs `Authorization: Bearer <token>`; otherwise 401 with no
/// hint about the token. Never throws.
boost::asio::awaitable<Response> handle_admin(const Request& req, std::string_view path,
                                              service::CheckService& service,
                                              const std::optional<std::string>& token);

// bearer_matches (the token check) is in request_tokens.hpp.

}  // namespace ratelimitd::http
