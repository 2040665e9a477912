// RoutedCall: one request as the router keeps it while its handler runs, held in the awaiting
// frame (the session's), so the router needs no coroutine frame of its own.
#pragma once

#include "ratelimitd/http/endpoints.hpp"
#include "ratelimitd/http/request_id.hpp"
#include "ratelimitd/http/types.hpp"

#include <array>

namespace ratelimitd::http {

/// The call a handler is given, its endpoint, and the room its new request id is written in. Neither
/// copied nor moved: `call` refers to the request, the context and `fresh_id_`.
class RoutedCall {
public:
    /// `req` and `ctx` outlive this. Reads the clock into ctx.arrived when the session did not.
    RoutedCall(const Request& req, RequestContext& ctx);
    RoutedCall(const RoutedCall&) = delete;
    RoutedCall& operator=(const RoutedCall&) = delete;

    /// The target without its query, the caller's X-Request-Id (when it is a sane token) or a
    /// new one.
    [[nodiscard]] const EndpointCall& call() const noexcept { return call_; }
    /// The endpoint the path names, or nullptr (404); found once for the route and its label.
    [[nodiscard]] const Endpoint* endpoint() const noexcept { return endpoint_; }
    /// The route label its request is counted under: the endpoint's path, or "other".
    [[nodiscard]] std::string_view label() const noexcept { return endpoint_ != nullptr ? endpoint_->path : "other"; }

private:
    std::array<char, request_id_length> fresh_id_;
    EndpointCall call_;
    const Endpoint* endpoint_;
};

}  // namespace ratelimitd::http
