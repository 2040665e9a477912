// /v1/report: a report into a road::Call (planned as a check, decided in report mode) and
// answered as a check (always 200: a report is charged without asking). A refund (negative
// cost) is an operator's act: refused before anything is planned, logged and audited.
#include "ratelimitd/audit/audit_event.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/http/report_codec.hpp"

namespace ratelimitd::http::handlers {

namespace net = boost::asio;

namespace {

// The refund as the road decided it: given back, or why not.
std::string_view refund_outcome(const road::Call& c) {
    if (c.problem) return to_string(c.problem->code);
    const service::Decision& d = c.decision;
    return !d.limited ? "not_limited" : d.degraded ? to_string(d.store_error) : "refunded";
}

void audit_refund(const EndpointServices& s, const EndpointCall& call, const audit::RefundEvent& e) {
    if (s.options.audit != nullptr) audit::write_event(*s.options.audit, s.actor(call), e);
}

Answer report_answer(EndpointServices& s, const road::Call& c, std::int64_t cost, const EndpointCall& call,
                     std::chrono::steady_clock::time_point handed) {
    const Request& req = call.req;
    if (c.problem) {
        // A problem is found while planning, before any wait: what was asked is still the door's.
        if (cost < 0) {
            const check::CheckRequest& asked = c.report->check;
            audit_refund(s, call, {asked.policy ? std::string_view(*asked.policy) : "", asked.tenant,
                                   asked.scope ? std::string_view(*asked.scope) : "global", -cost,
                                   refund_outcome(c), call.request_id});
        }
        return make_error_response(*c.problem, req.version(), req.keep_alive());
    }
    const service::Decision& d = c.decision;
    if (cost < 0) {
        road::Road::log_refund(c, static_cast<std::uint64_t>(-cost), call.ctx.peer, call.request_id);
        audit_refund(s, call, {d.policy, d.tenant, d.scope, -cost, refund_outcome(c), call.request_id});
    }
    auto res = make_check_answer(d, req.version(), req.keep_alive());
    s.access_log.write(d, res.status(), call.request_id);
    if (s.options.tracer != nullptr) s.trace_call(call, c, res.status(), handed);
    return res;
}

}  // namespace

// Not a coroutine, as check is not.
net::awaitable<Answer> report(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    auto parsed = parse_report_json(req.body());
    if (!parsed) return answered(make_error_response(parsed.error(), req.version(), req.keep_alive()));
    // Giving units back is an operator's act (door: admin_to_give_back); refused before
    // anything is planned or charged.
    if (parsed->cost < 0) {
        if (auto refusal = s.give_back_refusal(call)) return answered(std::move(*refusal));
    }
    road::Call asked(road::Ask::report);
    asked.report = &*parsed;
    asked.now = call.ctx.arrived;
    const std::int64_t cost = parsed->cost;
    // The store span starts at the request's arrival (its body's parse before it, microseconds):
    // one more capture would put the waiting frame past what Asio recycles (Road::decide).
    return s.road.decide(std::move(asked), [&s, &call, cost](road::Call& c) {
        return report_answer(s, c, cost, call, call.ctx.arrived);
    });
}

}  // namespace ratelimitd::http::handlers
