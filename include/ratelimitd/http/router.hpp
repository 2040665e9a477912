// Maps method + path to a handler; answers 404 and 405 for the rest.
#pragma once

#include "ratelimitd/door/doors.hpp"
#include "ratelimitd/http/endpoints.hpp"
#include "ratelimitd/http/types.hpp"
#include "ratelimitd/service/check_service.hpp"
#include "ratelimitd/service/metrics.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::http {

/// Which checks the access log records (one line per check, rate-limited).
enum class AccessLogMode { off, denied, all };

/// Process settings the endpoints need.
struct RouterOptions {
    std::string version = "0";
    std::string store_name;                    ///< for ratelimitd_build_info
    std::optional<std::string> admin_token;    ///< when set, admin endpoints need it as a bearer token
    AccessLogMode access_log = AccessLogMode::off;
    double access_log_sample = 1.0;            ///< fraction of eligible checks logged, 0..1
    int access_log_per_second = 100;           ///< at most this many access lines per second per thread
    std::optional<std::string> hash_secret;    ///< RATELIMITD_HASH_SECRET: wins over the file's hash_secret
    /// More Prometheus text appended to /metrics (the gRPC transport's series); unset: none.
    std::function<std::string()> extra_metrics;
    /// xds_force_start: /readyz answers ready before the control plane's first config (else
    /// 503 {"status":"not_ready","config":"awaiting_xds"} until it is in force).
    bool ready_before_xds_config = false;
};

/// The endpoints of one server thread (the table is in endpoints.cpp, with each door's access,
/// which route() and the report handler enforce):
///   POST|GET /v1/check     decide a check (contract §2)
///   any      /v1/auth[/...] a reverse proxy's auth subrequest (contract §6)
///   GET      /healthz      200 while the process runs
///   GET      /readyz       200 when the store answers, else 503 (shared deployments); 503 in
///                          both modes while the xDS control plane's first config is awaited
///   GET      /readyz?mode=sidecar   200 while the process answers checks, store up or down
///   GET      /metrics      Prometheus text format
///   POST     /v1/report    charges units after the fact (docs/policies.md); a negative cost
///                          (a refund) is admin's, as below
///   POST     /v1/release   frees a concurrency lease (docs/leases.md)
///   GET      /v1/policies, GET /v1/peek, GET /v1/top, POST /v1/reset, GET /v1/envoy/peek,
///            POST /v1/envoy/reset                          admin (bearer token when configured,
///                                                          else loopback peers only)
///   GET      /             the status page (status_page.hpp)
/// Anything else: 404 not_found, or 405 method_not_allowed (with Allow) on a known path.
/// Every response carries X-Request-Id: the caller's (when it is a sane token) or a new one.
class Router {
public:
    /// `metrics` counts every request by route and status, and is what /metrics renders.
    Router(service::CheckService& service, service::Metrics& metrics, const RouterOptions& options)
        : service_(service), doors_(service), metrics_(metrics), options_(options) {}

    /// Answers one request. Never throws; completes on the caller's executor.
    boost::asio::awaitable<Response> handle(Request req, RequestContext ctx = {});

private:
    friend std::span<const Endpoint> endpoint_table() noexcept;  // names the handlers below

    boost::asio::awaitable<Response> route(const EndpointCall& call);

    /// The refusal a door's `who` gives this caller before its handler runs, or nothing.
    std::optional<Response> door_refusal(Access who, const EndpointCall& call) const;
    /// The refusal of a caller that may not give units back (admin_access), or nothing.
    std::optional<Response> give_back_refusal(const EndpointCall& call) const;

    // The handlers of the endpoint table; each is called with a method its row allows.
    boost::asio::awaitable<Response> check(const EndpointCall& call);
    boost::asio::awaitable<Response> auth(const EndpointCall& call);
    boost::asio::awaitable<Response> healthz(const EndpointCall& call);
    boost::asio::awaitable<Response> readyz(const EndpointCall& call);
    boost::asio::awaitable<Response> metrics_text(const EndpointCall& call);
    boost::asio::awaitable<Response> policies(const EndpointCall& call);
    boost::asio::awaitable<Response> peek(const EndpointCall& call);
    boost::asio::awaitable<Response> reset(const EndpointCall& call);
    boost::asio::awaitable<Response> status_page(const EndpointCall& call);
    boost::asio::awaitable<Response> top(const EndpointCall& call);  // top_endpoint.hpp
    boost::asio::awaitable<Response> report(const EndpointCall& call);
    boost::asio::awaitable<Response> release(const EndpointCall& call);  // release_endpoint.hpp
    boost::asio::awaitable<Response> envoy_peek(const EndpointCall& call);   // envoy_admin_endpoints.hpp
    boost::asio::awaitable<Response> envoy_reset(const EndpointCall& call);

    void access_log(const service::Decision& d, unsigned status, std::string_view request_id);

    service::CheckService& service_;  ///< the admin endpoints' (peek, reset, top, readiness)
    door::Doors doors_;               ///< the road of check, auth, report and release
    service::Metrics& metrics_;
    const RouterOptions& options_;
    std::int64_t log_second_ = 0;   // access-log rate limit: the current second...
    int log_lines_ = 0;             // ...and the lines written in it (this thread only)
};

}  // namespace ratelimitd::http
