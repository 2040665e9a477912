// POST /v1/report on the wire: the body in (the answer is /v1/check's, see check_codec.hpp).
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/report_plan.hpp"

#include <string_view>

namespace ratelimitd::http {

/// Parses a POST /v1/report body with parse_body_json(BodyKind::report): /v1/check's JSON
/// object (policy, tenant, scope, method, path, plan) with a required signed integer `cost`,
/// -1000000..-1 (a refund, an operator's act) or 1..1000000. Not JSON or not an object, or a
/// field given twice -> invalid_request; cost absent, not an integer, 0 or out of range ->
/// invalid_cost; the other fields as parse_check_json. Never throws.
result<policy::ReportRequest> parse_report_json(std::string_view body);

}  // namespace ratelimitd::http
