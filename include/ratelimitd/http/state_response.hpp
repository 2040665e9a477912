// Answers of the endpoints that read or change a counter's state outside a check (admin peek
// and reset, Envoy descriptor peek and reset, lease release): one way to write each.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/http/types.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::http {

/// `body` as a JSON answer to `req`; invalid UTF-8 (a tenant, a label) is replaced, never
/// thrown.
Response state_json_response(const Request& req, bhttp::status status, const nlohmann::ordered_json& body);

/// The error answer of such a call: a store that cannot answer is 503 (the state is unknown,
/// not wrong: retry), anything else as make_error_response.
Response state_error_response(const Request& req, const Problem& problem);

}  // namespace ratelimitd::http
