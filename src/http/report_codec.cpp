// The /v1/report body: /v1/check's fields with a signed cost, read by the one body reader
// (parse_body_json), so both endpoints read their common fields, and refuse a field given
// twice, alike.
#include "ratelimitd/http/report_codec.hpp"

#include "ratelimitd/http/check_codec.hpp"

#include <utility>

namespace ratelimitd::http {

result<policy::ReportRequest> parse_report_json(std::string_view body) {
    auto fields = parse_body_json(body, BodyKind::report);
    if (!fields) return fields.error();
    policy::ReportRequest out;
    out.check = std::move(fields->check);
    out.cost = fields->cost;
    return out;
}

}  // namespace ratelimitd::http
