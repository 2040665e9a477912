// ShouldRateLimit's server span: parent from the call's `traceparent`/`tracestate` metadata (Envoy
// sends them when its tracing is on), OpenTelemetry's RPC conventions (span name
// "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit", rpc.system grpc, rpc.service,
// rpc.method, rpc.grpc.status_code) and the call's ratelimit.* attributes with its domain.
#pragma once

#include "ratelimitd/road/call.hpp"
#include "ratelimitd/trace/tracer.hpp"

#include <grpcpp/server_context.h>

#include <chrono>
#include <memory>
#include <string>

namespace ratelimitd::rls {

/// A sampled call's trace, held by the call until it finishes.
struct RlsTrace {
    const trace::Tracer& tracer;
    trace::TracedCheck check;
    const std::string& store_name;
};

/// The call's trace when it is sampled, else null.
[[nodiscard]] std::shared_ptr<const RlsTrace> start_rls_trace(const trace::Tracer& tracer,
                                                              const grpc::CallbackServerContext& context,
                                                              const std::string& store_name);

/// A call's instants: its arrival, and when it went to the road and came back (unset when it
/// never reached the road).
struct RlsInstants {
    std::chrono::steady_clock::time_point arrived;
    std::chrono::steady_clock::time_point handed;
    std::chrono::steady_clock::time_point answered;
};

/// Submits the finished call's span, and its store call's child span when the road decided it
/// without a problem. `decided`: the road's call (null when the request did not decode);
/// `domain`: empty when unknown. An error status (gRPC's, not a denial) marks it error.
void trace_rls_call(const RlsTrace& trace, const RlsInstants& at, const road::Call* decided, std::string_view domain,
                    grpc::StatusCode status) noexcept;

}  // namespace ratelimitd::rls
