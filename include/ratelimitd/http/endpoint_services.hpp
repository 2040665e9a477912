// What every endpoint's handler is served with on its server thread: the road, the metrics,
// the process settings, the access log and the admin rule's audit lines.
#pragma once

#include "ratelimitd/audit/audit_trail.hpp"
#include "ratelimitd/http/access_log.hpp"
#include "ratelimitd/http/endpoints.hpp"
#include "ratelimitd/http/router_options.hpp"
#include "ratelimitd/road/road.hpp"
#include "ratelimitd/service/check_service.hpp"
#include "ratelimitd/service/metrics.hpp"

#include <chrono>
#include <optional>
#include <string_view>

namespace ratelimitd::http {

/// One per server thread (the Router's); handlers get it by reference.
class EndpointServices {
public:
    EndpointServices(service::CheckService& service, service::Metrics& metrics, const RouterOptions& options)
        : road(service, options.hash_secret), metrics(metrics), options(options), access_log(options, metrics) {}

    road::Road road;  ///< every door's, and every admin door's that reads or forgets state
    service::Metrics& metrics;
    const RouterOptions& options;
    AccessLog access_log;

    /// Who made an admin call, as the audit trail names them (never the token itself).
    [[nodiscard]] audit::Actor actor(const EndpointCall& call) const;
    /// An admin door's call into the audit trail: allowed (status 0) or refused.
    void audit_admin_call(const EndpointCall& call, std::string_view door, unsigned status) const;
    /// The refusal of a caller that may not give units back (admin_access), or nothing; the
    /// call is audited either way.
    [[nodiscard]] std::optional<Response> give_back_refusal(const EndpointCall& call) const;
    /// A decided door call's server span (when tracing is on and the call is sampled): parent
    /// from the request's traceparent/tracestate, the HTTP server conventions' name and
    /// attributes, the call's ratelimit.* ones; and its store call's child span, from `handed`
    /// (when the door gave the call to the road: handed_to_road()) to now. Call only when
    /// options.tracer is set.
    void trace_call(const EndpointCall& call, const road::Call& decided, unsigned status,
                    std::chrono::steady_clock::time_point handed) const;
    /// The instant a door gives its call to the road, read only when tracing is on (the store
    /// span's start); the clock's epoch otherwise.
    [[nodiscard]] std::chrono::steady_clock::time_point handed_to_road() const noexcept {
        return options.tracer != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    }
};

}  // namespace ratelimitd::http
