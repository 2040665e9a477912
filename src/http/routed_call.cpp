// RoutedCall: the path and request id of one request, found once for the handler and the
// router's metrics.
#include "ratelimitd/http/routed_call.hpp"

#include "ratelimitd/http/request_tokens.hpp"

#include <chrono>

namespace ratelimitd::http {

namespace {

std::string_view path_of(const Request& req) noexcept {
    const std::string_view target = req.target();
    return target.substr(0, target.find('?'));
}

}  // namespace

RoutedCall::RoutedCall(const Request& req, RequestContext& ctx)
    : call_{req, path_of(req), ctx, req["X-Request-Id"]}, endpoint_(find_endpoint(call_.path)) {
    // The id lives here (the caller's in the request, a new one in fresh_id_): no string is
    // made for it.
    if (!is_sane_request_id(call_.request_id)) {
        next_request_id(fresh_id_);
        call_.request_id = std::string_view(fresh_id_.data(), fresh_id_.size());
    }
    // ratelimitd's own answer time, from the request read (the session's reading of the clock).
    if (ctx.arrived == std::chrono::steady_clock::time_point{}) ctx.arrived = std::chrono::steady_clock::now();
}

}  // namespace ratelimitd::http
