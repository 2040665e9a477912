// Spans into OTLP's ExportTraceServiceRequest (proto/opentelemetry/...): the body of OTLP/HTTP's
// POST /v1/traces (serialized) and of OTLP/gRPC's TraceService/Export. No I/O.
#pragma once

#include "ratelimitd/trace/span.hpp"

#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

#include <span>
#include <string>

namespace ratelimitd::otlp {

/// The resource attributes of every export: the semantic conventions' service.* names.
struct ServiceResource {
    std::string name = "ratelimitd";  ///< service.name
    std::string namespace_;           ///< service.namespace; empty: not sent
    std::string instance_id;          ///< service.instance.id; empty: not sent
    std::string version;              ///< service.version
};

/// One ResourceSpans of one ScopeSpans (scope "ratelimitd") holding `spans` in order.
[[nodiscard]] opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest
encode_export_request(const ServiceResource& resource, std::span<const trace::Span> spans);

}  // namespace ratelimitd::otlp
