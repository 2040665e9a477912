// Maps method + path to a handler; answers 404 and 405 for the rest.
#pragma once

#include "ratelimitd/audit/audit_trail.hpp"
#include "ratelimitd/door/doors.hpp"
#include "ratelimitd/door/rls_json.hpp"
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

using door::RlsJson;
using door::RlsJsonAnswer;

/// `GET /healthcheck` as envoyproxy/ratelimit answers it: 200 "OK", else 500.
struct HealthcheckOptions {
    bool pings_store = false;   ///< REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: 500 while the store does not answer
    bool needs_domain = false;  ///< HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 500 until a domain is loaded
};

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
    /// `POST /json`; unset: the path answers 404 (ERL mode sets it).
    RlsJson rls_json;
    HealthcheckOptions healthcheck;
    /// xds_force_start: /readyz answers ready before the control plane's first config (else
    /// 503 {"status":"not_ready","config":"awaiting_xds"} until it is in force).
    bool ready_before_xds_config = false;
    /// The audit trail (resets, refunds, admin calls; GET /v1/audit); null: none is kept.
    audit::AuditTrail* audit = nullptr;
};

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
        : service_(service), doors_(service), metrics_(metrics), options_(options) {}

    /// Answers one request. Never throws; completes on the caller's executor.
    boost::asio::awaitable<Answer> handle(Request req, RequestContext ctx = {});

private:
    friend std::span<const Endpoint> endpoint_table() noexcept;  // names the handlers below

    /// The endpoint's handler for `call`, or the 404/405/refusal answer (not a coroutine).
    boost::asio::awaitable<Answer> route(const EndpointCall& call);

    /// The refusal a door's `who` gives this caller before its handler runs, or nothing.
    std::optional<Response> door_refusal(Access who, const EndpointCall& call) const;
    /// The refusal of a caller that may not give units back (admin_access), or nothing.
    std::optional<Response> give_back_refusal(const EndpointCall& call) const;

    // The handlers of the endpoint table; each is called with a method its row allows.
    boost::asio::awaitable<Answer> check(const EndpointCall& call);
    boost::asio::awaitable<Answer> auth(const EndpointCall& call);
    boost::asio::awaitable<Answer> healthz(const EndpointCall& call);
    boost::asio::awaitable<Answer> readyz(const EndpointCall& call);
    boost::asio::awaitable<Answer> metrics_text(const EndpointCall& call);
    boost::asio::awaitable<Answer> policies(const EndpointCall& call);
    boost::asio::awaitable<Answer> peek(const EndpointCall& call);
    boost::asio::awaitable<Answer> reset(const EndpointCall& call);
    boost::asio::awaitable<Answer> status_page(const EndpointCall& call);
    boost::asio::awaitable<Answer> top(const EndpointCall& call);  // top_endpoint.hpp
    boost::asio::awaitable<Answer> report(const EndpointCall& call);
    boost::asio::awaitable<Answer> release(const EndpointCall& call);  // release_endpoint.hpp
    boost::asio::awaitable<Answer> envoy_peek(const EndpointCall& call);   // envoy_admin_endpoints.hpp
    boost::asio::awaitable<Answer> envoy_reset(const EndpointCall& call);
    boost::asio::awaitable<Answer> healthcheck(const EndpointCall& call);  // erl_endpoints.cpp
    boost::asio::awaitable<Answer> rls_json(const EndpointCall& call);
    boost::asio::awaitable<Answer> rlconfig(const EndpointCall& call);
    boost::asio::awaitable<Answer> notify_test(const EndpointCall& call);  // notify_test_endpoint.hpp
    boost::asio::awaitable<Answer> audit(const EndpointCall& call);  // audit_endpoint.hpp

    /// Who made an admin call, as the audit trail names them (never the token itself).
    audit::Actor actor(const EndpointCall& call) const;
    /// An admin door's call into the audit trail: allowed (status 0) or refused.
    void audit_admin_call(const EndpointCall& call, std::string_view door, unsigned status) const;

    void access_log(const service::Decision& d, unsigned status, std::string_view request_id);

    /// /v1/check once the store is to be waited for: `plan` is Doors::check_now's.
    boost::asio::awaitable<Answer> check_later(const EndpointCall& call, policy::CheckPlan plan);
    /// A decided check's answer, access-logged.
    Answer check_answer(const service::Decision& decision, const EndpointCall& call);
    /// /v1/auth once the store is to be waited for: `plan` and `deny_status` are Doors::auth_now's.
    boost::asio::awaitable<Answer> auth_later(const EndpointCall& call, policy::CheckPlan plan, int deny_status);
    /// /v1/report once planned: decides `plan` (report mode), then report_answer.
    boost::asio::awaitable<Answer> report_later(const EndpointCall& call, policy::CheckPlan plan,
                                                door::RefundedLimits refunded, std::int64_t cost);
    /// A decided report's answer, access-logged; a refund (negative `cost`) logged per limit
    /// and in the audit trail.
    Answer report_answer(const service::Decision& decision, const door::RefundedLimits& refunded, std::int64_t cost,
                         const EndpointCall& call);
    /// A refund's line in the audit trail (when there is one): what was asked, and its outcome.
    struct RefundRecord {
        std::string_view policy;
        std::string_view tenant;
        std::string_view scope;
        std::int64_t units = 0;
        std::string_view outcome;  ///< refunded, not_limited, or why not (an error code)
    };
    void audit_refund(const EndpointCall& call, const RefundRecord& r) const;
    /// A decided auth subrequest's answer (bodiless: the proxy reads the status), access-logged.
    Answer auth_answer(const service::Decision& decision, int deny_status, const EndpointCall& call);

    service::CheckService& service_;  ///< the admin endpoints' (peek, reset, top, readiness)
    door::Doors doors_;               ///< the road of check, auth, report and release
    service::Metrics& metrics_;
    const RouterOptions& options_;
    std::int64_t log_second_ = 0;   // access-log rate limit: the current second...
    int log_lines_ = 0;             // ...and the lines written in it (this thread only)
};

}  // namespace ratelimitd::http
