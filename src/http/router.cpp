// Router: dispatch by the endpoint table, each door's wire translation (its road is
// door::Doors), request ids, HTTP metrics and the access log.
#include "ratelimitd/http/router.hpp"

#include "ratelimitd/core/log_value.hpp"
#include "ratelimitd/http/admin_endpoints.hpp"
#include "ratelimitd/http/audit_endpoint.hpp"
#include "ratelimitd/http/envoy_admin_endpoints.hpp"
#include "ratelimitd/http/auth_codec.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/http/notify_test_endpoint.hpp"
#include "ratelimitd/http/release_endpoint.hpp"
#include "ratelimitd/http/report_codec.hpp"
#include "ratelimitd/http/request_id.hpp"
#include "ratelimitd/http/request_tokens.hpp"
#include "ratelimitd/http/status_page.hpp"
#include "ratelimitd/http/top_endpoint.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
#include <optional>
#include <random>

namespace ratelimitd::http {

namespace net = boost::asio;

namespace {

Response method_not_allowed(const Request& req, const Endpoint& e, std::string_view path) {
    const std::string allow = allow_header(e);
    auto res = make_error_response(
        Problem{errc::method_not_allowed, "method: " + std::string(req.method_string()) +
                                              " is not allowed on " + std::string(path) + "; use " + allow},
        req.version(), req.keep_alive());
    res.set(bhttp::field::allow, allow);
    return res;
}

Response not_found(const Request& req, std::string_view path) {
    return make_error_response(
        Problem{errc::not_found, "path: " + std::string(path.substr(0, 200)) + " is not an endpoint"},
        req.version(), req.keep_alive());
}

// An answer known without waiting, as the awaitable route() hands back.
net::awaitable<Answer> answered(Answer a) { co_return a; }

// A listener with its own set of routes (ServerLimits::routes) answers only those.
bool served_here(const Endpoint& e, const RequestContext& ctx) {
    if (ctx.routes == nullptr) return true;
    for (const auto& path : *ctx.routes) {
        if (path == e.path) return true;
    }
    return false;
}

}  // namespace

net::awaitable<Answer> Router::handle(Request req, RequestContext ctx) {
    const std::string_view target = req.target();
    const std::string_view path = target.substr(0, target.find('?'));
    // The id lives in this frame (the caller's in the request, a new one in fresh_id): no
    // string is made for it.
    std::string_view request_id = req["X-Request-Id"];
    std::array<char, request_id_length> fresh_id;
    if (!is_sane_request_id(request_id)) {
        next_request_id(fresh_id);
        request_id = std::string_view(fresh_id.data(), fresh_id.size());
    }

    metrics_.request_started();
    // ratelimitd's own answer time, from the request read (the session's reading of the clock).
    if (ctx.arrived == std::chrono::steady_clock::time_point{}) ctx.arrived = std::chrono::steady_clock::now();
    std::optional<Answer> routed;
    try {
        routed = co_await route(EndpointCall{req, path, ctx, request_id});
    } catch (const std::exception& e) {
        // The unit of work is one request: a library call that threw (out of memory, a bug)
        // answers 500 and is logged; it never ends the session or the process.
        spdlog::error("answered 500 after an unexpected exception request_id={} path={} error={}", request_id,
                      route_label(path), log_value(e.what()));
        routed = json_response(req, bhttp::status::internal_server_error,
                               R"({"error":"internal_error","detail":"the request could not be handled"})");
    }
    Answer res = std::move(*routed);
    metrics_.request_finished();
    metrics_.count_http(route_label(path), res.status());
    // The request's second and last clock read: the answer time's end, and where the session
    // counts the keep-alive idle time from.
    const auto ready = std::chrono::steady_clock::now();
    metrics_.observe_answer_time(route_label(path), ready - ctx.arrived);
    res.add_field("X-Request-Id", request_id);
    res.ready_at(ready);
    co_return res;
}

// Not a coroutine: the handler's own awaitable is handed back, so a check runs in one frame
// fewer (a frame is an allocation and a resume on every request).
net::awaitable<Answer> Router::route(const EndpointCall& call) {
    const Endpoint* endpoint = find_endpoint(call.path);
    if (endpoint == nullptr || !served_here(*endpoint, call.ctx)) return answered(not_found(call.req, call.path));
    // Access first: a caller without the token learns nothing about an admin endpoint's methods.
    const bool admin_door = endpoint->door.who == Access::admin;
    if (auto refusal = door_refusal(endpoint->door.who, call)) {
        if (admin_door) audit_admin_call(call, endpoint->path, refusal->result_int());
        return answered(std::move(*refusal));
    }
    if (admin_door) audit_admin_call(call, endpoint->path, 0);
    if (!allows(*endpoint, call.req.method())) return answered(method_not_allowed(call.req, *endpoint, call.path));
    return (this->*endpoint->handler)(call);
}

std::optional<Response> Router::door_refusal(Access who, const EndpointCall& call) const {
    switch (who) {
    case Access::admin: return admin_refusal(call.req, options_.admin_token, call.ctx.peer);
    case Access::admin_page:
        if (options_.admin_token) return std::nullopt;
        return admin_refusal(call.req, options_.admin_token, call.ctx.peer);
    // Asked by the handler once it knows the act (give_back_refusal), or nobody's to refuse.
    case Access::admin_to_give_back:
    case Access::lease_holder:
    case Access::anyone: return std::nullopt;
    }
    return std::nullopt;
}

std::optional<Response> Router::give_back_refusal(const EndpointCall& call) const {
    auto refusal = admin_refusal(call.req, options_.admin_token, call.ctx.peer, AdminAct::give_back);
    audit_admin_call(call, call.path, refusal ? refusal->result_int() : 0);
    return refusal;
}

audit::Actor Router::actor(const EndpointCall& call) const {
    // Called only once admin_access allowed the caller: with a token set, it presented it.
    return {call.ctx.peer.empty() ? std::nullopt : std::optional<std::string>(call.ctx.peer),
            options_.admin_token.has_value()};
}

void Router::audit_admin_call(const EndpointCall& call, std::string_view door, unsigned status) const {
    if (options_.audit == nullptr) return;
    audit::Actor who = actor(call);
    if (status != 0) who.token = false;
    options_.audit->admin_call(who, door, call.req.method_string(), status);
}

// Not a coroutine: a check the door decides at once (the embedded store, a cached denial, bad
// input) is answered without a frame of its own; only one that waits for the store gets one.
net::awaitable<Answer> Router::check(const EndpointCall& call) {
    const Request& req = call.req;
    const std::string_view target = req.target();
    result<check::CheckRequest> parsed;
    if (req.method() == bhttp::verb::post) {
        parsed = parse_check_json(req.body());
    } else {
        const auto q = target.find('?');
        parsed = parse_check_query(q == std::string_view::npos ? std::string_view{} : target.substr(q + 1));
    }
    if (!parsed) return answered(make_error_response(parsed.error(), req.version(), req.keep_alive()));
    policy::CheckPlan plan;
    if (auto now = doors_.check_now(*parsed, plan, call.ctx.arrived)) {
        if (!*now) return answered(make_error_response(now->error(), req.version(), req.keep_alive()));
        return answered(check_answer(**now, call));
    }
    return check_later(call, std::move(plan));
}

// The frame holds the plan and the decision once (the service's coroutine refers to them), so
// it stays within what Asio's frame cache keeps.
net::awaitable<Answer> Router::check_later(const EndpointCall& call, policy::CheckPlan plan) {
    service::Decision decision;
    co_await doors_.decide_into(plan, decision);
    co_return check_answer(decision, call);
}

Answer Router::check_answer(const service::Decision& decision, const EndpointCall& call) {
    auto res = make_check_answer(decision, call.req.version(), call.req.keep_alive());
    access_log(decision, res.status(), call.request_id);
    return res;
}

// Not a coroutine, as check() is not: an auth subrequest the door decides at once (the embedded
// store, a cached denial, bad input) is answered without a frame of its own.
net::awaitable<Answer> Router::auth(const EndpointCall& call) {
    const Request& req = call.req;
    auto query = parse_auth_request(req, call.path);
    if (!query) return answered(make_error_response(query.error(), req.version(), req.keep_alive()));
    const auto input = identity_input(req, call.ctx.peer);
    const door::AuthRequest asked{query->method, query->uri, input, query->deny_status, options_.hash_secret};
    policy::CheckPlan plan;
    int deny_status = 429;
    if (auto now = doors_.auth_now(asked, plan, deny_status, call.ctx.arrived)) {
        if (!*now) return answered(make_error_response(now->error(), req.version(), req.keep_alive()));
        return answered(auth_answer((*now)->decision, (*now)->deny_status, call));
    }
    return auth_later(call, std::move(plan), deny_status);
}

// The frame holds the plan and the decision once, as check_later's does.
net::awaitable<Answer> Router::auth_later(const EndpointCall& call, policy::CheckPlan plan, int deny_status) {
    service::Decision decision;
    co_await doors_.decide_into(plan, decision);
    co_return auth_answer(decision, deny_status, call);
}

Answer Router::auth_answer(const service::Decision& decision, int deny_status, const EndpointCall& call) {
    const Request& req = call.req;
    auto res = make_auth_answer(decision, deny_status, req.version(), req.keep_alive(),
                                req.method() == bhttp::verb::head);
    access_log(decision, res.status(), call.request_id);
    return res;
}

// A report is planned as a check, decided in report mode and answered as a check (always 200:
// a report is charged without asking). Not a coroutine: what is parsed and planned is done
// before the one frame that waits (report_later), which keeps only the plan and the decision.
net::awaitable<Answer> Router::report(const EndpointCall& call) {
    const Request& req = call.req;
    auto parsed = parse_report_json(req.body());
    if (!parsed) return answered(make_error_response(parsed.error(), req.version(), req.keep_alive()));
    // Giving units back is an operator's act (door: admin_to_give_back); refused before
    // anything is planned or charged.
    if (parsed->cost < 0) {
        if (auto refusal = give_back_refusal(call)) return answered(std::move(*refusal));
    }
    policy::CheckPlan plan;
    door::RefundedLimits refunded;
    if (auto bad = doors_.report_plan(*parsed, plan, refunded)) {
        if (parsed->cost < 0) {
            audit_refund(call, RefundRecord{parsed->check.policy.value_or(""), parsed->check.tenant,
                                            parsed->check.scope.value_or("global"), -parsed->cost,
                                            to_string(bad->code)});
        }
        return answered(make_error_response(*bad, req.version(), req.keep_alive()));
    }
    return report_later(call, std::move(plan), std::move(refunded), parsed->cost);
}

net::awaitable<Answer> Router::report_later(const EndpointCall& call, policy::CheckPlan plan,
                                            door::RefundedLimits refunded, std::int64_t cost) {
    service::Decision decision;
    co_await doors_.decide_into(plan, decision);
    co_return report_answer(decision, refunded, cost, call);
}

Answer Router::report_answer(const service::Decision& decision, const door::RefundedLimits& refunded,
                             std::int64_t cost, const EndpointCall& call) {
    if (cost < 0) {
        door::Doors::log_refund(decision, static_cast<std::uint64_t>(-cost), refunded,
                                door::Caller{call.ctx.peer, call.request_id});
        // The refund as the road decided it: given back, or why not.
        const std::string_view outcome = !decision.limited ? "not_limited"
                                         : decision.degraded ? to_string(decision.store_error)
                                                             : "refunded";
        audit_refund(call, RefundRecord{decision.policy, decision.tenant, decision.scope, -cost, outcome});
    }
    auto res = make_check_answer(decision, call.req.version(), call.req.keep_alive());
    access_log(decision, res.status(), call.request_id);
    return res;
}

void Router::audit_refund(const EndpointCall& call, const RefundRecord& r) const {
    if (options_.audit == nullptr) return;
    options_.audit->record("refund", actor(call),
                           {{"door", "/v1/report"},
                            {"policy", r.policy},
                            {"tenant", r.tenant},
                            {"scope", r.scope},
                            {"units", r.units},
                            {"outcome", r.outcome},
                            {"request_id", call.request_id}});
}

net::awaitable<Answer> Router::healthz(const EndpointCall& call) {
    co_return json_response(call.req, bhttp::status::ok, R"({"status":"ok"})");
}

net::awaitable<Answer> Router::readyz(const EndpointCall& call) {
    const Request& req = call.req;
    const std::string_view target = req.target();
    const auto q = target.find('?');
    const std::string_view mode = q == std::string_view::npos ? "mode=shared" : target.substr(q + 1);
    if (mode != "mode=shared" && mode != "mode=sidecar") {
        co_return make_error_response(
            Problem{errc::invalid_request, "query: /readyz takes mode=shared (the default) or mode=sidecar"},
            req.version(), req.keep_alive());
    }
    // The Envoy domains come from xds_server and none has arrived: Envoy's calls would fail.
    if (service_.registry()->awaiting_xds && !options_.ready_before_xds_config) {
        co_return json_response(req, bhttp::status::service_unavailable,
                                R"({"status":"not_ready","config":"awaiting_xds"})");
    }
    const bool ok = co_await service_.store().ready();
    // A sidecar answers its own pod's checks by each policy's on_store_error while the store is
    // down; failing its readiness then would take every app pod out of its Service at once.
    if (mode == "mode=sidecar") {
        co_return json_response(req, bhttp::status::ok, ok ? R"({"status":"ready","store":"ready"})"
                                                           : R"({"status":"ready","store":"not_ready"})");
    }
    co_return json_response(req, ok ? bhttp::status::ok : bhttp::status::service_unavailable,
                            ok ? R"({"status":"ready"})" : R"({"status":"not_ready"})");
}

net::awaitable<Answer> Router::metrics_text(const EndpointCall& call) {
    auto text = metrics_.render(options_.version, options_.store_name);
    if (options_.extra_metrics) text += options_.extra_metrics();
    co_return make_response(bhttp::status::ok, "text/plain; version=0.0.4; charset=utf-8", std::move(text),
                            call.req.version(), call.req.keep_alive());
}

net::awaitable<Answer> Router::policies(const EndpointCall& call) {
    co_return answer_policies(call.req, service_);
}

net::awaitable<Answer> Router::top(const EndpointCall& call) { co_return co_await answer_top(call.req, service_); }

net::awaitable<Answer> Router::peek(const EndpointCall& call) {
    co_return co_await answer_peek(call.req, service_);
}

net::awaitable<Answer> Router::notify_test(const EndpointCall& call) {
    co_return co_await answer_notify_test(call.req, service_);
}

net::awaitable<Answer> Router::reset(const EndpointCall& call) {
    ResetRecord record;
    auto res = co_await answer_reset(call.req, service_, &record);
    if (options_.audit != nullptr) {
        options_.audit->record("reset", actor(call),
                               {{"door", "/v1/reset"},
                                {"policy", record.policy},
                                {"tenant", record.tenant},
                                {"scope", record.scope},
                                {"outcome", record.outcome},
                                {"status", res.result_int()},
                                {"request_id", call.request_id}});
    }
    co_return res;
}

net::awaitable<Answer> Router::audit(const EndpointCall& call) {
    if (options_.audit == nullptr) {
        co_return make_error_response(Problem{errc::not_found, "path: /v1/audit: no audit trail in this process"},
                                      call.req.version(), call.req.keep_alive());
    }
    co_return answer_audit(call.req, *options_.audit);
}

net::awaitable<Answer> Router::release(const EndpointCall& call) {
    co_return co_await answer_release(call.req, doors_);
}

net::awaitable<Answer> Router::status_page(const EndpointCall& call) {
    co_return answer_status_page(call.req, options_.admin_token, call.ctx.peer);
}

net::awaitable<Answer> Router::envoy_peek(const EndpointCall& call) {
    co_return co_await answer_envoy_peek(call.req, service_);
}

net::awaitable<Answer> Router::envoy_reset(const EndpointCall& call) {
    EnvoyResetRecord record;
    auto res = co_await answer_envoy_reset(call.req, service_, &record);
    if (options_.audit != nullptr) {
        options_.audit->record("reset", actor(call),
                               {{"door", "/v1/envoy/reset"},
                                {"domain", record.domain},
                                {"rule", record.rule},
                                {"descriptor_keys", record.entry_keys},
                                {"key_hash", record.key_hash},
                                {"outcome", record.outcome},
                                {"status", res.result_int()},
                                {"request_id", call.request_id}});
    }
    co_return res;
}

void Router::access_log(const service::Decision& d, unsigned status, std::string_view request_id) {
    // Shadow denials are what a limit's rollout watches: logged whatever the mode, within the
    // same sampling and per-second cap.
    if (!d.shadow_denied) {
        if (options_.access_log == AccessLogMode::off) return;
        if (options_.access_log == AccessLogMode::denied && d.verdict.allowed) return;
    }
    if (options_.access_log_sample < 1.0) {
        static thread_local std::minstd_rand rng{std::random_device{}()};
        if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) >= options_.access_log_sample) return;
    }
    // At most access_log_per_second lines per second on this thread, so a flood of denials
    // cannot turn into a flood of log lines.
    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::steady_clock::now().time_since_epoch()).count();
    if (now_s != log_second_) {
        log_second_ = now_s;
        log_lines_ = 0;
    }
    if (++log_lines_ > options_.access_log_per_second) {
        metrics_.count_access_log_dropped();
        return;
    }
    const auto verdict = d.degraded ? (d.verdict.allowed ? "degraded_allowed" : "failed_closed")
                                    : (!d.verdict.allowed ? "denied" : d.shadow_denied ? "shadow_denied" : "allowed");
    spdlog::info("access request_id={} policy={} tenant={} scope={} verdict={} status={}", request_id, d.policy,
                 d.tenant, d.scope, verdict, status);
}

}  // namespace ratelimitd::http
