// Spans into the bytes of OTLP's ExportTraceServiceRequest (proto/opentelemetry/...): the body of
// OTLP/HTTP's POST /v1/traces and of OTLP/gRPC's TraceService/Export. Written straight from the
// spans by WireWriter with trace.proto's field numbers: no message objects (a protobuf Span with
// its attributes cost more than the check it describes). No I/O.
#pragma once

#include "ratelimitd/trace/span.hpp"

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

/// One ResourceSpans of one ScopeSpans (scope "ratelimitd") holding `spans` in order, serialized
/// into `out` (cleared first; its capacity is kept for the next batch).
void encode_export_request(const ServiceResource& resource, std::span<const trace::Span> spans, std::string& out);

}  // namespace ratelimitd::otlp
