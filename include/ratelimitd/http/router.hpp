// Maps method + path to a handler (handlers.hpp); answers 404 and 405 for the rest.
#pragma once

#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/endpoints.hpp"
#include "ratelimitd/http/routed_call.hpp"
#include "ratelimitd/http/router_options.hpp"
#include "ratelimitd/http/types.hpp"
#include "ratelimitd/service/check_service.hpp"
#include "ratelimitd/service/metrics.hpp"

#include <boost/asio/awaitable.hpp>

#include <exception>
#include <optional>

namespace ratelimitd::http {

/// The endpoints of one server thread (the table is in endpoints.cpp, with each door's access,
/// which route() and the report handler enforce):
///   POST|GET /v1/check     decide a check (docs/api.md)
///   any      /v1/auth[/...] a reverse proxy's auth subrequest (docs/proxies.md)
///   GET      /healthz      200 while the process runs
///   GET      /readyz       200 when the store answers, else 503 (shared deployments); 503 in
///                          both modes while the xDS control plane's first config is awaited
///   GET      /readyz?mode=sidecar   200 while the process answers checks, store up or down
///   GET      /metrics      Prometheus text format
///   POST     /v1/report    charges units after the fact (docs/policies.md); a negative cost
///                          (a refund) is admin's, as below
///   POST     /v1/release   frees a concurrency lease (docs/leases.md)
///   GET      /v1/policies, GET /v1/peek, GET /v1/top, POST /v1/reset, GET /v1/envoy/peek,
///            POST /v1/envoy/reset, GET /v1/audit,          admin (bearer token when configured,
///            POST /v1/notify/test
///                                                          else loopback peers only)
///   GET      /             the status page (status_page.hpp)
///   GET      /healthcheck, POST /json, GET /rlconfig   envoyproxy/ratelimit's (erl_endpoints.cpp)
/// Anything else: 404 not_found, or 405 method_not_allowed (with Allow) on a known path.
/// Every response carries X-Request-Id: the caller's (when it is a sane token) or a new one.
class Router {
public:
    /// `metrics` counts every request by route and status, and is what /metrics renders.
    Router(service::CheckService& service, service::Metrics& metrics, const RouterOptions& options)
        : services_(service, metrics, options) {}

    /// Answers one request. Never throws; completes on the caller's executor.
    boost::asio::awaitable<Answer> handle(Request req, RequestContext ctx = {});

    // handle()'s steps, for a caller that awaits the handler in its own frame (run_session:
    // a coroutine frame fewer per request). In order, for one RoutedCall: the answer of
    // co_await route(routed), or failed(routed, e) when that threw; finish(answer, routed).

    /// Counts the request in; the endpoint's handler for `call`, or the 404/405/refusal answer
    /// (not a coroutine). `routed` outlives the awaitable.
    boost::asio::awaitable<Answer> route(const RoutedCall& routed);
    /// The 500 for a handler that threw `e`, logged.
    Answer failed(const RoutedCall& routed, const std::exception& e);
    /// Counts the answer by route and status, ends its answer time and gives it X-Request-Id.
    void finish(Answer& res, const RoutedCall& routed);

private:

    /// The refusal a door's `who` gives this caller before its handler runs, or nothing.
    std::optional<Response> door_refusal(Access who, const EndpointCall& call) const;

    EndpointServices services_;  ///< what the handlers (handlers.hpp) are given
};

}  // namespace ratelimitd::http
