// The process settings the HTTP endpoints need, set once before serving.
#pragma once

#include "ratelimitd/audit/audit_trail.hpp"
#include "ratelimitd/road/rls_json.hpp"
#include "ratelimitd/service/status_history.hpp"
#include "ratelimitd/trace/tracer.hpp"

#include <functional>
#include <optional>
#include <string>

namespace ratelimitd::http {

/// Which checks the access log records (one line per check, rate-limited).
enum class AccessLogMode { off, denied, all };

using road::RlsJson;
using road::RlsJsonAnswer;

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
    /// max_held_requests: /v1/auth answers held for their delay at once in this process;
    /// one more delayed check is denied (docs/policies.md "Delaying").
    std::size_t max_held_requests = 1000;
    /// The audit trail (resets, refunds, admin calls; GET /v1/audit); null: none is kept.
    audit::AuditTrail* audit = nullptr;
    /// The status page's last 15 minutes (GET /v1/status/history); null: the path answers 404.
    const service::StatusHistory* status_history = nullptr;
    /// Traces (docs/tracing.md): each sampled check's span goes to its sink; null: tracing is off,
    /// and a check pays one branch for it.
    const trace::Tracer* tracer = nullptr;
    /// What a span's ratelimit.store names (the store's kind: redis, memory, ...).
    std::string trace_store_name;
};

}  // namespace ratelimitd::http
