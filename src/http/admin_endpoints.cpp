// Admin endpoints: /v1/policies, /v1/peek and /v1/reset (their state read and forgotten on the
// road), and who may call them.
#include "ratelimitd/http/admin_endpoints.hpp"

#include "ratelimitd/audit/audit_event.hpp"
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/http/loopback.hpp"
#include "ratelimitd/http/state_response.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::http {

namespace net = boost::asio;
using json = nlohmann::ordered_json;

namespace {

/// limit/window/burst of a single-window policy, or its `windows` list.
json limits_json(const policy::Policy& p) {
    const auto window_json = [](const policy::Policy& w) {
        json entry = {{"limit", w.limit}, {"window", format_duration(w.window)}};
        if (w.has_burst()) entry["burst"] = w.burst + w.queued_tokens;  // as written with `delay: N`
        if (w.delay_at_once) entry["delay"] = *w.delay_at_once;
        if (w.max_delay) entry["max_delay"] = format_duration(*w.max_delay);
        if (w.max_held) entry["max_held"] = *w.max_held;
        return entry;
    };
    if (p.windows.empty()) return window_json(p);
    json windows = json::array();
    for (const auto& w : p.windows) {
        json entry = window_json(w);
        entry["name"] = w.name;
        windows.push_back(std::move(entry));
    }
    return {{"windows", std::move(windows)}};
}

json registry_json(const policy::Registry& reg) {
    json policies = json::object();
    for (const auto& [name, p] : reg.policies) {
        json entry = {{"algorithm", policy::to_string(p.algorithm)}};
        entry.update(limits_json(p));
        entry["on_store_error"] = p.on_store_error == policy::OnStoreError::allow ? "allow" : "deny";
        if (p.shadow) entry["shadow"] = true;
        policies[name] = std::move(entry);
    }
    json plans = json::object();
    for (const auto& [plan_name, plan] : reg.plans) {
        json entry = json::object();
        for (const auto& [policy_name, p] : plan.policies) entry[policy_name] = limits_json(p);
        plans[plan_name] = std::move(entry);
    }
    json routes = json::array();
    for (const auto& r : reg.routes) {
        json entry = json::object();
        if (r.method) entry["method"] = *r.method;
        entry["path"] = r.path;
        entry["policy"] = r.policy;
        // Layered routes (or a limit with its own identity) show every limit.
        if (r.limits.size() > 1 || (r.limits.size() == 1 && r.limits[0].identity)) {
            json limits = json::array();
            for (const auto& l : r.limits) {
                json item = {{"policy", l.policy}};
                if (l.identity) item["identity"] = *l.identity;
                limits.push_back(std::move(item));
            }
            entry["limits"] = std::move(limits);
        }
        if (r.scope) entry["scope"] = *r.scope;
        routes.push_back(std::move(entry));
    }
    return {{"file", reg.source_file},
            {"sha256", reg.source_sha256},
            {"loaded_at", reg.loaded_at_epoch_s},
            {"prefix", reg.prefix},
            {"default_policy", reg.default_policy ? json(*reg.default_policy) : json(nullptr)},
            {"policies", std::move(policies)},
            {"plans", std::move(plans)},
            // Tenant ids are not secrets, but a registry may hold many: the count only.
            {"tenants", reg.tenants.size()},
            {"routes", std::move(routes)}};
}

}  // namespace

AdminAccess admin_access(const std::optional<std::string>& token, std::string_view authorization,
                         std::string_view peer) noexcept {
    if (token) return bearer_matches(authorization, *token) ? AdminAccess::allowed : AdminAccess::unauthorized;
    return is_loopback_address(peer) ? AdminAccess::allowed : AdminAccess::disabled;
}

std::optional<Response> admin_refusal(const Request& req, const std::optional<std::string>& token,
                                      std::string_view peer, AdminAct act) {
    const bool refund = act == AdminAct::give_back;
    const auto access = admin_access(token, req[bhttp::field::authorization], peer);
    if (access == AdminAccess::disabled) {
        return state_json_response(
            req, bhttp::status::forbidden,
            {{"error", "admin_disabled"},
             {"detail", refund ? "cost: a negative cost gives units back, an operator's act: no admin token is "
                                 "set, so only loopback peers may; set RATELIMITD_ADMIN_TOKEN to refund from "
                                 "elsewhere"
                               : "admin endpoints: no admin token is set, so only loopback peers may "
                                 "call them; set RATELIMITD_ADMIN_TOKEN to call them from elsewhere"}});
    }
    if (access == AdminAccess::unauthorized) {
        auto res = state_json_response(
            req, bhttp::status::unauthorized,
            {{"error", "unauthorized"},
             {"detail", refund ? "authorization: a negative cost gives units back and needs the admin bearer "
                                 "token"
                               : "authorization: admin endpoints need a valid bearer token"}});
        res.set(bhttp::field::www_authenticate, "Bearer realm=\"ratelimitd-admin\"");
        return res;
    }
    return std::nullopt;
}

namespace handlers {

net::awaitable<Answer> policies(EndpointServices& s, const EndpointCall& call) {
    co_return state_json_response(call.req, bhttp::status::ok, registry_json(*s.road.registry()));
}

net::awaitable<Answer> peek(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    const std::string_view target = req.target();
    const auto q = target.find('?');
    auto parsed = parse_check_query(q == std::string_view::npos ? std::string_view{} : target.substr(q + 1));
    if (!parsed) co_return make_error_response(parsed.error(), req.version(), req.keep_alive());
    road::Call asked(road::Ask::peek);
    asked.check = &*parsed;
    co_await s.road.decide(asked);
    if (asked.problem) co_return state_error_response(req, *asked.problem);
    const service::Decision& state = asked.decision;
    const auto& w = state.verdict.reported();
    co_return state_json_response(req, bhttp::status::ok,
                                  {{"policy", state.policy},
                                   {"tenant", state.tenant},
                                   {"scope", state.scope},
                                   {"limit", w.limit},
                                   {"remaining", w.remaining},
                                   {"reset", w.reset_epoch_s},
                                   {"reset_after", w.reset_after_s}});
}

namespace {

// POST /v1/reset's answer: the key's state forgotten; `outcome` says what came of it.
net::awaitable<Response> answer_reset(EndpointServices& s, const Request& req, const check::CheckRequest& asked,
                                      std::string& outcome) {
    json body = {{"policy", asked.policy ? json(*asked.policy) : json(nullptr)},
                 {"tenant", asked.tenant},
                 {"scope", asked.scope.value_or("global")}};
    road::Call forget(road::Ask::reset);
    forget.check = &asked;
    co_await s.road.decide(forget);
    if (forget.problem) {
        outcome = std::string(to_string(forget.problem->code));
        co_return state_error_response(req, *forget.problem);
    }
    outcome = forget.forgot ? "reset" : "nothing_to_reset";
    body["reset"] = forget.forgot;
    co_return state_json_response(req, bhttp::status::ok, body);
}

}  // namespace

net::awaitable<Answer> reset(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    auto parsed = parse_check_json(req.body());
    std::string outcome;
    std::optional<Response> res;
    if (!parsed) {
        outcome = std::string(to_string(parsed.error().code));
        res = make_error_response(parsed.error(), req.version(), req.keep_alive());
    } else {
        res = co_await answer_reset(s, req, *parsed, outcome);
    }
    if (s.options.audit != nullptr) {
        const audit::PolicyTarget target{parsed && parsed->policy ? std::string_view(*parsed->policy) : "",
                                         parsed ? std::string_view(parsed->tenant) : "",
                                         !parsed               ? std::string_view()
                                         : parsed->scope       ? std::string_view(*parsed->scope)
                                                               : std::string_view("global")};
        audit::write_event(*s.options.audit, s.actor(call),
                           audit::ResetEvent{"/v1/reset", target, outcome, res->result_int(), call.request_id});
    }
    co_return std::move(*res);
}

}  // namespace handlers

}  // namespace ratelimitd::http
