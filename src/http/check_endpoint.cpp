// /v1/check: the query or JSON body into a road::Call, the call's decision into the answer.
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"

namespace ratelimitd::http::handlers {

namespace net = boost::asio;

namespace {

// A decided check's answer, access-logged; a problem (bad input) as its error.
Answer check_answer(EndpointServices& s, const road::Call& c, const EndpointCall& call,
                    std::chrono::steady_clock::time_point handed) {
    const Request& req = call.req;
    if (c.problem) return make_error_response(*c.problem, req.version(), req.keep_alive());
    auto res = make_check_answer(c.decision, req.version(), req.keep_alive());
    if (const std::int64_t delay = c.decision.verdict.delay_ms(); delay > 0) {
        s.metrics.delays.observe_delay(service::DelayDoor::check, delay);
    }
    s.access_log.write(c.decision, res.status(), call.request_id);
    if (s.options.tracer != nullptr) s.trace_call(call, c, res.status(), handed);
    return res;
}

// The query or the JSON body into the call's own request (a body's is moved once).
result<void> parse_into(const Request& req, check::CheckRequest& out) {
    if (req.method() == bhttp::verb::post) return parse_check_json_into(req.body(), out);
    const std::string_view target = req.target();
    const auto q = target.find('?');
    auto parsed = parse_check_query(q == std::string_view::npos ? std::string_view{} : target.substr(q + 1));
    if (!parsed) return parsed.error();
    out = std::move(*parsed);
    return {};
}

}  // namespace

// Not a coroutine: road::Road::decide answers at once when it can, and keeps the call in a
// frame of its own only when the store is to be waited for.
net::awaitable<Answer> check(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    check::CheckRequest request;
    if (auto parsed = parse_into(req, request); !parsed) {
        return answered(make_error_response(parsed.error(), req.version(), req.keep_alive()));
    }
    road::Call asked(road::Ask::check);
    asked.check = &request;
    asked.now = call.ctx.arrived;
    const auto handed = s.handed_to_road();
    return s.road.decide(std::move(asked),
                         [&s, &call, handed](road::Call& c) { return check_answer(s, c, call, handed); });
}

}  // namespace ratelimitd::http::handlers
