// envoyproxy/ratelimit's TRACING_* variables as ratelimitd's trace settings, one to one
// (docs/envoy.md's variable table; docs/tracing.md).
#pragma once

#include "ratelimitd/core/error.hpp"

#include <map>
#include <string>

namespace ratelimitd::erl {

/// What its TRACING_* variables said.
struct ErlTracing {
    bool enabled = false;            ///< TRACING_ENABLED
    std::string protocol = "http";   ///< TRACING_EXPORTER_PROTOCOL: http (or empty) | grpc
    std::string service_name;        ///< TRACING_SERVICE_NAME
    std::string service_namespace;   ///< TRACING_SERVICE_NAMESPACE
    std::string service_instance_id; ///< TRACING_SERVICE_INSTANCE_ID; empty: a random UUID, as it does
    std::string sampling_rate = "1"; ///< TRACING_SAMPLING_RATE, as written
};

/// The overlay (RATELIMITD_* and the OTEL_* names its Go SDK does not read in this mode) that
/// makes ratelimitd trace as it does: parentbased_traceidratio at the rate clamped to [0, 1],
/// OTLP/HTTP or gRPC to OTEL_EXPORTER_OTLP_ENDPOINT (its SDK's default endpoint,
/// http://localhost:4318 or :4317, when unset). Disabled: tracing off, whatever OTEL_* say (it
/// exports nothing then). A protocol other than http, grpc or empty is refused, as it refuses to
/// start; so is a rate that is not a number.
[[nodiscard]] result<std::map<std::string, std::string>> erl_tracing_overlay(const ErlTracing& tracing);

}  // namespace ratelimitd::erl
