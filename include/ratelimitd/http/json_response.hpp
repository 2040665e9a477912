// The one way a handler builds a whole response: status, content type, body and the fields
// every answer carries.
#pragma once

#include "ratelimitd/http/rendered_answer.hpp"
#include "ratelimitd/http/types.hpp"

#include <string_view>

namespace ratelimitd::http {

/// A response with `content_type`, Cache-Control: no-store (every answer describes one
/// moment), the given HTTP version and keep-alive, and its Content-Length.
Response make_response(bhttp::status status, std::string_view content_type, std::string_view body,
                       unsigned version, bool keep_alive);

/// make_response with Content-Type: application/json; `body` is JSON text already.
Response json_response(bhttp::status status, std::string_view body, unsigned version, bool keep_alive);

/// json_response answering `req` (its version and keep-alive).
Response json_response(const Request& req, bhttp::status status, std::string_view body);

/// The same fields and body as json_response, written straight as bytes: the check and auth
/// doors' answers, which add their rate-limit lines to it.
RenderedAnswer json_answer(bhttp::status status, PooledString body, unsigned version, bool keep_alive);

}  // namespace ratelimitd::http
