// /v1/auth: a reverse proxy's subrequest into a road::Call, its decision into a bodiless answer
// (the proxy reads the status).
#include "ratelimitd/http/auth_codec.hpp"
#include "ratelimitd/http/auth_hold.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"

namespace ratelimitd::http::handlers {

namespace net = boost::asio;

namespace {

Answer auth_answer(EndpointServices& s, const road::Call& c, const EndpointCall& call,
                   std::chrono::steady_clock::time_point handed) {
    const Request& req = call.req;
    if (c.problem) return make_error_response(*c.problem, req.version(), req.keep_alive());
    Answer res = make_auth_answer(c.decision, c.deny_status, req.version(), req.keep_alive(),
                                  req.method() == bhttp::verb::head);
    if (const std::int64_t delay = c.decision.verdict.delay_ms(); delay > 0) {
        res = hold_or_refuse(s, c, req, std::move(res), delay);
    }
    s.access_log.write(c.decision, res.status(), call.request_id);
    if (s.options.tracer != nullptr) s.trace_call(call, c, res.status(), handed);
    return res;
}

}  // namespace

// Not a coroutine, as check is not.
net::awaitable<Answer> auth(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    auto query = parse_auth_request(req, call.path);
    if (!query) return answered(make_error_response(query.error(), req.version(), req.keep_alive()));
    const auto input = identity_input(req, call.ctx.peer);
    // The hash secret is the road's to choose (the settings', else the registry's).
    const policy::AuthRequest subrequest{query->method, query->uri, input, {}};
    road::Call asked(road::Ask::auth);
    asked.auth = &subrequest;
    asked.deny_status_asked = query->deny_status;
    asked.now = call.ctx.arrived;
    const auto handed = s.handed_to_road();
    return s.road.decide(std::move(asked),
                         [&s, &call, handed](road::Call& c) { return auth_answer(s, c, call, handed); });
}

}  // namespace ratelimitd::http::handlers
