// Router: dispatch by the endpoint table to its handlers (handlers.hpp), request ids and HTTP
// metrics.
#include "ratelimitd/http/router.hpp"

#include "ratelimitd/core/log_value.hpp"
#include "ratelimitd/http/admin_endpoints.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/json_response.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>

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

// The session runs the same steps in its own frame (run_session); this frame is for callers
// that hand a request over whole (tests, the simulator).
net::awaitable<Answer> Router::handle(Request req, RequestContext ctx) {
    const RoutedCall routed(req, ctx);
    std::optional<Answer> answer;
    try {
        answer.emplace(co_await route(routed));
    } catch (const std::exception& e) {
        answer.emplace(failed(routed, e));
    }
    finish(*answer, routed);
    co_return std::move(*answer);
}

Answer Router::failed(const RoutedCall& routed, const std::exception& e) {
    // The unit of work is one request: a library call that threw (out of memory, a bug)
    // answers 500 and is logged; it never ends the session or the process.
    spdlog::error("answered 500 after an unexpected exception request_id={} path={} error={}",
                  routed.call().request_id, routed.label(), log_value(e.what()));
    return json_response(routed.call().req, bhttp::status::internal_server_error,
                         R"({"error":"internal_error","detail":"the request could not be handled"})");
}

void Router::finish(Answer& res, const RoutedCall& routed) {
    // The request's second and last clock read: the answer time's end, and where the session
    // counts the keep-alive idle time from.
    const auto ready = std::chrono::steady_clock::now();
    services_.metrics.count_answer(routed.label(), res.status(), ready - routed.call().ctx.arrived);
    res.add_field("X-Request-Id", routed.call().request_id);
    res.ready_at(ready);
}

// Not a coroutine: the handler's own awaitable is handed back, so a check runs in one frame
// fewer (a frame is an allocation and a resume on every request).
net::awaitable<Answer> Router::route(const RoutedCall& routed) {
    services_.metrics.request_started();
    const EndpointCall& call = routed.call();
    const Endpoint* endpoint = routed.endpoint();
    if (endpoint == nullptr || !served_here(*endpoint, call.ctx)) return answered(not_found(call.req, call.path));
    // Access first: a caller without the token learns nothing about an admin endpoint's methods.
    const bool admin_door = endpoint->door.who == Access::admin;
    if (auto refusal = door_refusal(endpoint->door.who, call)) {
        if (admin_door) services_.audit_admin_call(call, endpoint->path, refusal->result_int());
        return answered(std::move(*refusal));
    }
    if (admin_door) services_.audit_admin_call(call, endpoint->path, 0);
    if (!allows(*endpoint, call.req.method())) return answered(method_not_allowed(call.req, *endpoint, call.path));
    return endpoint->handler(services_, call);
}

std::optional<Response> Router::door_refusal(Access who, const EndpointCall& call) const {
    switch (who) {
    case Access::admin: return admin_refusal(call.req, services_.options.admin_token, call.ctx.peer);
    case Access::admin_page:
        if (services_.options.admin_token) return std::nullopt;
        return admin_refusal(call.req, services_.options.admin_token, call.ctx.peer);
    // Asked by the handler once it knows the act (give_back_refusal), or nobody's to refuse.
    case Access::admin_to_give_back:
    case Access::lease_holder:
    case Access::anyone: return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace ratelimitd::http
