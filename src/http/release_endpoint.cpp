// POST /v1/release on the wire: the body in (read once), the state after the release out;
// planned and freed on the road (road::Ask::release).
#include "ratelimitd/http/release_endpoint.hpp"

#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/http/json_writer.hpp"
#include "ratelimitd/http/rate_limit_headers.hpp"
#include "ratelimitd/http/state_response.hpp"
#include "ratelimitd/store/lease_id.hpp"

#include <optional>

namespace ratelimitd::http {

namespace net = boost::asio;

namespace {

// The body's fields, read by the one body reader, with a well-formed lease. The raw text of
// a wrong lease is never echoed: a lease is a capability, and a wrong one is somebody's guess.
result<BodyFields> release_body(std::string_view body) {
    auto fields = parse_body_json(body, BodyKind::release);
    const Problem malformed{errc::invalid_request,
                            "lease: expected the 32 lower-case hex digits of the lease a check returned"};
    if (!fields) {
        // A missing or non-string lease says what a lease is; a repeated one says it was repeated.
        const std::string& detail = fields.error().detail;
        const bool lease_shape = detail.starts_with("lease:") && detail.find("more than once") == std::string::npos;
        return lease_shape ? malformed : fields.error();
    }
    if (!store::is_lease_id(fields->lease)) return malformed;
    return fields;
}

// A lease that was not live: nothing changed, and the answer carries none of the tenant's
// state (what only the admin peek shows); only the holder of a live lease learns it.
Response not_released(const Request& req, const service::Decision& d, const std::string& lease) {
    JsonWriter w;
    w.begin_object();
    w.key("released").boolean(false);
    w.key("policy").string(d.policy);
    w.key("tenant").string(d.tenant);
    w.key("scope").string(d.scope);
    w.key("lease").string(lease);
    w.end_object();
    return json_response(req, bhttp::status::ok, w.take());
}

Response rendered(const Request& req, const service::Decision& d, const std::string& lease) {
    const check::WindowState& s = d.verdict.windows.front();
    JsonWriter w;
    w.begin_object();
    w.key("released").boolean(true);
    w.key("policy").string(d.policy);
    w.key("tenant").string(d.tenant);
    w.key("scope").string(d.scope);
    w.key("lease").string(lease);
    w.key("limit").number(s.limit);
    w.key("remaining").number(s.remaining);
    w.key("reset").number(s.reset_epoch_s);
    w.key("reset_after").number(s.reset_after_s);
    w.end_object();
    Response res = json_response(req, bhttp::status::ok, w.take());
    // The headers of the state after the release; nothing was denied, so no Retry-After.
    check::Verdict state = d.verdict;
    state.allowed = state.windows.front().allowed = true;
    set_rate_limit_headers(state, res);
    return res;
}

// The answer to a decided release.
Response release_response(const Request& req, const road::Call& decided, const std::string& lease) {
    // A store failure is unknown, not wrong: retry later (503).
    if (decided.problem) return state_error_response(req, *decided.problem);
    const service::Decision& d = decided.decision;
    if (!d.verdict.allowed) return not_released(req, d, lease);
    if (d.verdict.windows.empty()) {
        return make_error_response(Problem{errc::bad_script_reply, "release: the store reported no state"},
                                   req.version(), req.keep_alive());
    }
    return rendered(req, d, lease);
}

}  // namespace

net::awaitable<Response> answer_release(const Request& req, const road::Road& road) {
    auto body = release_body(req.body());
    if (!body) co_return make_error_response(body.error(), req.version(), req.keep_alive());
    road::Call asked(road::Ask::release);
    asked.check = &body->check;
    asked.lease = body->lease;
    co_await road.decide(asked);
    co_return release_response(req, asked, body->lease);
}

namespace handlers {

// The door's release: answer_release's, with the call's server span (a lease is never in it).
net::awaitable<Answer> release(EndpointServices& s, const EndpointCall& call) {
    if (s.options.tracer == nullptr) co_return co_await answer_release(call.req, s.road);
    auto body = release_body(call.req.body());
    if (!body) co_return make_error_response(body.error(), call.req.version(), call.req.keep_alive());
    road::Call asked(road::Ask::release);
    asked.check = &body->check;
    asked.lease = body->lease;
    const auto handed = s.handed_to_road();
    co_await s.road.decide(asked);
    Response res = release_response(call.req, asked, body->lease);
    s.trace_call(call, asked, res.result_int(), handed);
    co_return res;
}

}  // namespace handlers

}  // namespace ratelimitd::http
