// GET /v1/status/history: a copy of the ring, rendered. It takes no parameter and touches no
// store; the admin rule (its row in the endpoint table) decides who may read it.
#include "ratelimitd/http/status_history_endpoint.hpp"

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/service/metrics.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::http {
namespace {

constexpr service::Outcome verdicts[] = {service::Outcome::allowed, service::Outcome::denied,
                                         service::Outcome::shadow_denied, service::Outcome::degraded_allowed,
                                         service::Outcome::failed_closed};

nlohmann::ordered_json sample_json(const service::StatusSample& s) {
    nlohmann::ordered_json checks = nlohmann::ordered_json::object();
    for (const auto v : verdicts) checks[service::to_string(v)] = s.checks[static_cast<std::size_t>(v)];
    nlohmann::ordered_json denied = nlohmann::ordered_json::object();
    for (const auto& p : s.denied) {
        if (!p.policy.empty()) denied[p.policy] = p.denied;
    }
    if (s.denied_other > 0) denied["(other)"] = s.denied_other;
    const auto ms = [](double v) { return v < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v); };
    return {{"at", s.at_ms},
            {"seconds", static_cast<double>(s.span_ms) / 1000.0},
            {"checks", std::move(checks)},
            {"denied", std::move(denied)},
            {"store", {{"calls", s.store_calls}, {"p50_ms", ms(s.store_p50_ms)}, {"p99_ms", ms(s.store_p99_ms)},
                       {"errors", s.store_errors}}},
            {"webhooks", {{"sent", s.webhooks_sent}, {"dropped", s.webhooks_dropped}}},
            {"held", s.held}};
}

}  // namespace

std::string status_history_json(const std::vector<service::StatusSample>& samples) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["interval_seconds"] = static_cast<double>(service::StatusHistory::interval.count()) / 1000.0;
    out["capacity"] = service::StatusHistory::capacity;
    nlohmann::ordered_json names = nlohmann::ordered_json::array();
    for (const auto v : verdicts) names.push_back(service::to_string(v));
    out["verdicts"] = std::move(names);
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& s : samples) list.push_back(sample_json(s));
    out["samples"] = std::move(list);
    // A policy name is the config's, any UTF-8: replaced rather than refused if it were not.
    return out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace handlers {

Handled status_history(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    if (s.options.status_history == nullptr) {
        return answered(make_error_response(Problem{errc::not_found, "/v1/status/history: no history is kept here"},
                                            req.version(), req.keep_alive()));
    }
    return answered(json_response(req, bhttp::status::ok, status_history_json(s.options.status_history->samples())));
}

}  // namespace handlers
}  // namespace ratelimitd::http
