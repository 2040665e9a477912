// /v1/envoy/peek and /v1/envoy/reset: one descriptor planned on the road as a ShouldRateLimit
// call of its own would plan it (same rule, same key), then that key's peek or reset.
#include "ratelimitd/http/envoy_admin_endpoints.hpp"

#include "ratelimitd/audit/audit_event.hpp"
#include "ratelimitd/core/percent.hpp"
#include "ratelimitd/core/query_string.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/http/state_response.hpp"
#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/rls_plan.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::http {

namespace net = boost::asio;
using json = nlohmann::ordered_json;

namespace {

std::string_view query_of(const Request& req) {
    const std::string_view target = req.target();
    const auto q = target.find('?');
    return q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
}

json described(const policy::RlsPlan& p, std::string_view domain) {
    const auto& d = p.descriptors.front();
    return {{"domain", domain}, {"rule", d.label}, {"limited", d.kind == policy::RlsDescriptorPlan::Kind::limited}};
}

}  // namespace

result<policy::RlsRequest> parse_envoy_state_query(std::string_view query) {
    policy::RlsRequest req;
    req.descriptors.emplace_back();
    bool have_domain = false;
    const PercentOptions form{.plus_is_space = true, .malformed = MalformedPercent::reject};
    while (const auto item = next_query_item(query)) {
        auto name = percent_decode(item->name, form);
        auto value = percent_decode(item->value, form);
        if (!name || !value) return Problem{errc::invalid_request, "query: a '%' without two hex digits"};
        if (!have_domain && *name == "domain") {
            req.domain = std::move(*value);
            have_domain = true;
        } else {
            req.descriptors.front().entries.push_back(policy::RlsEntry{std::move(*name), std::move(*value)});
        }
    }
    return req;
}

namespace handlers {

net::awaitable<Answer> envoy_peek(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    auto asked = parse_envoy_state_query(query_of(req));
    if (!asked) co_return make_error_response(asked.error(), req.version(), req.keep_alive());
    policy::RlsPlan plan;
    road::Call peek(road::Ask::envoy_peek);
    peek.rls = &*asked;
    peek.rls_plan = &plan;
    co_await s.road.decide(peek);
    if (peek.problem) co_return state_error_response(req, *peek.problem);
    json body = described(plan, asked->domain);
    const auto& d = plan.descriptors.front();
    if (d.kind != policy::RlsDescriptorPlan::Kind::limited) co_return state_json_response(req, bhttp::status::ok, body);
    const auto& state = peek.decision.verdict.reported();
    body["limit"] = d.requests_per_unit;
    body["unit"] = policy::to_string(d.unit);
    body["remaining"] = state.remaining;
    // An aligned window ends at its unit boundary, whatever the store's own clock of the key says.
    body["reset"] = d.window_end_s != 0 ? d.window_end_s : state.reset_epoch_s;
    co_return state_json_response(req, bhttp::status::ok, body);
}

namespace {

// POST /v1/envoy/reset's answer; `target` and `outcome` get what the audit entry names.
net::awaitable<Response> answer_envoy_reset(EndpointServices& s, const Request& req, const policy::RlsRequest& asked,
                                            audit::EnvoyTarget& target, std::string& outcome) {
    policy::RlsPlan plan;
    road::Call forget(road::Ask::envoy_reset);
    forget.rls = &asked;
    forget.rls_plan = &plan;
    co_await s.road.decide(forget);
    if (forget.problem && plan.descriptors.empty()) {
        outcome = std::string(to_string(forget.problem->code));
        co_return make_error_response(*forget.problem, req.version(), req.keep_alive());
    }
    json body = described(plan, asked.domain);
    const auto& d = plan.descriptors.front();
    target.rule = d.label;
    if (d.kind != policy::RlsDescriptorPlan::Kind::limited) {
        outcome = "not_limited";
        body["reset"] = false;
        co_return state_json_response(req, bhttp::status::ok, body);
    }
    target.key_hash = forget.named.front().key_hash;
    if (forget.problem) {
        outcome = std::string(to_string(forget.problem->code));
        co_return state_error_response(req, *forget.problem);
    }
    outcome = forget.forgot ? "reset" : "nothing_to_reset";
    body["reset"] = forget.forgot;
    co_return state_json_response(req, bhttp::status::ok, body);
}

}  // namespace

net::awaitable<Answer> envoy_reset(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    auto asked = parse_envoy_state_query(query_of(req));
    audit::EnvoyTarget target;
    std::string outcome;
    std::optional<Response> res;
    if (!asked) {
        outcome = std::string(to_string(asked.error().code));
        res = make_error_response(asked.error(), req.version(), req.keep_alive());
    } else {
        target.domain = asked->domain;
        for (const auto& entry : asked->descriptors.front().entries) target.entry_keys.push_back(entry.key);
        res = co_await answer_envoy_reset(s, req, *asked, target, outcome);
    }
    if (s.options.audit != nullptr) {
        audit::write_event(*s.options.audit, s.actor(call),
                           audit::ResetEvent{"/v1/envoy/reset", std::move(target), outcome, res->result_int(),
                                             call.request_id});
    }
    co_return std::move(*res);
}

}  // namespace handlers

}  // namespace ratelimitd::http
