// The two request values the router compares or echoes, apart from the coroutine code so the
// fuzz target (clang) can build them: X-Request-Id and the admin bearer token.
#pragma once

#include <string_view>

namespace ratelimitd::http {

/// True when a caller's X-Request-Id may be echoed: 1..128 bytes of A-Z a-z 0-9 - _ . :
/// (a plain token cannot inject into headers or logs).
bool is_sane_request_id(std::string_view id) noexcept;

/// Compares a presented Authorization header with the token in constant time: the scheme
/// `Bearer` in any case, one or more spaces, then exactly the token.
bool bearer_matches(std::string_view authorization, std::string_view token) noexcept;

}  // namespace ratelimitd::http
