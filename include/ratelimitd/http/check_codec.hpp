// /v1/check on the wire: request bodies and query strings in, JSON answers out.
#pragma once

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/http/answer.hpp"
#include "ratelimitd/http/types.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace ratelimitd::http {

/// Which door a JSON body is for: the fields its reader knows and the range of its cost.
enum class BodyKind {
    check,    ///< POST /v1/check, /v1/reset: cost 1..1000000, 1 when absent
    report,   ///< POST /v1/report: cost required, -1000000..-1 (a refund) or 1..1000000
    release,  ///< POST /v1/release: a check's fields and a required string `lease`
};

/// What parse_body_json read.
struct BodyFields {
    check::CheckRequest check;
    std::int64_t cost = 1;  ///< the signed cost of a report; a check's check.cost otherwise
    std::string lease;      ///< BodyKind::release only (its format is the caller's to check)
};

/// The one reader of every JSON door's body: a JSON object with the fields of docs/api.md
/// and the door's own. A known field given twice is refused naming it (invalid_request,
/// "<field>: given more than once"), whatever the door, so no two readers of one body can
/// see different values. A report's cost errors are invalid_cost. Never throws.
result<BodyFields> parse_body_json(std::string_view body, BodyKind kind);

/// Parses a POST /v1/check body: a JSON object with the fields of docs/api.md
/// (policy, tenant, scope, method, path: strings; cost: integer). Unknown fields are ignored.
/// Not JSON, not an object, or a field of the wrong type -> invalid_request; cost out of
/// 1..1000000 -> invalid_cost. Does not check tenant/scope contents. Never throws.
/// The common shape (a flat object of plain strings and digits) is read without a general
/// JSON parser; everything else, and every error, goes through parse_check_json_general.
result<check::CheckRequest> parse_check_json(std::string_view body);

/// parse_check_json into the caller's `out` (a fresh CheckRequest): the request is moved once,
/// where returning it moved it through every layer of the reader. On a Problem `out` holds
/// nothing the caller may use.
result<void> parse_check_json_into(std::string_view body, check::CheckRequest& out);

/// parse_check_json with the general parser alone: the same result for every body (the
/// check_request fuzz target compares the two).
result<check::CheckRequest> parse_check_json_general(std::string_view body);

/// Parses the query string of GET /v1/check (the part after '?', percent-encoded, '+' is a
/// space) with the same fields and the same errors as parse_check_json. Never throws.
result<check::CheckRequest> parse_check_query(std::string_view query);

/// The one table from client-error codes to statuses (400, 413, 404, 405; 503 for
/// too_many_connections; 500 for anything that is not a client error, which is a bug).
bhttp::status status_for(errc code) noexcept;

/// {"error": "<code>", "detail": "<sentence>"} with status_for(p.code),
/// Content-Type: application/json and Cache-Control: no-store.
Response make_error_response(const Problem& p, unsigned version, bool keep_alive);

/// The answer to a decided check (docs/api.md): 200 or 429 with the JSON body
/// {"allowed", "policy", "tenant", "scope", "limit", "remaining", "reset", "retry_after"}
/// (plus "windows" when the policy has several, and "degraded": true when the store failed
/// and on_store_error answered) and the rate-limit headers. A `policy: none` decision is a
/// 200 with {"allowed": true, "policy": "none", ...} and no limit headers. A degraded deny
/// (fail closed) is a 503 with Retry-After: 1.
/// Written straight as wire bytes (a RenderedAnswer), except the error answers.
Answer make_check_answer(const service::Decision& d, unsigned version, bool keep_alive);

/// make_check_answer as a Beast message, for tests and tools that read its fields.
Response make_check_response(const service::Decision& d, unsigned version, bool keep_alive);

}  // namespace ratelimitd::http
