// The /v1/report body: /v1/check's fields, with a signed cost. The cost is taken out here and
// the rest is read by parse_check_json, so both endpoints read their common fields alike.
#include "ratelimitd/http/report_codec.hpp"

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/http/check_codec.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace ratelimitd::http {

result<policy::ReportRequest> parse_report_json(std::string_view body) {
    auto json = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
    if (json.is_discarded() || !json.is_object()) {
        return Problem{errc::invalid_request, "expected a JSON object with policy, tenant, scope and cost"};
    }
    const auto it = json.find("cost");
    const std::string range = "an integer -1000000..1000000 (negative to refund)";
    if (it == json.end()) return Problem{errc::invalid_cost, "cost: required, " + range};
    if (!it->is_number_integer()) return Problem{errc::invalid_cost, "cost: expected " + range};
    // An unsigned beyond int64 would wrap: anything that large is out of range anyway.
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > check::max_cost) {
        return Problem{errc::invalid_cost, "cost: expected " + range};
    }
    policy::ReportRequest out;
    out.cost = it->get<std::int64_t>();
    const auto most = static_cast<std::int64_t>(check::max_cost);
    if (out.cost < -most || out.cost > most) {
        return Problem{errc::invalid_cost, "cost: expected " + range + ", got " + std::to_string(out.cost)};
    }
    json.erase(it);
    auto check = parse_check_json(json.dump());
    if (!check) return check.error();
    out.check = std::move(*check);
    return out;
}

}  // namespace ratelimitd::http
