// Spans into the bytes of OTLP's ExportTraceServiceRequest (proto/opentelemetry/...): the body of
// OTLP/HTTP's POST /v1/traces and of OTLP/gRPC's TraceService/Export. Written straight from the
// spans by WireWriter with trace.proto's field numbers: no message objects (a protobuf Span with
// its attributes cost more than the check it describes). No I/O.
#pragma once

#include "ratelimitd/trace/span.hpp"

#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::otlp {

/// The resource attributes of every export: the semantic conventions' service.* names.
struct ServiceResource {
    std::string name = "ratelimitd";  ///< service.name
    std::string namespace_;           ///< service.namespace; empty: not sent
    std::string instance_id;          ///< service.instance.id; empty: not sent
    std::string version;              ///< service.version
};

/// One ResourceSpans of one ScopeSpans (scope "ratelimitd") holding `spans` in order, serialized
/// into `out` (cleared first; its capacity is kept for the next batch): encode_request_head's
/// bytes, then append_spans'.
void encode_export_request(const ServiceResource& resource, std::span<const trace::Span> spans, std::string& out);

/// Appends `spans` to `out` as ScopeSpans.spans fields, each a whole message: the bytes a request
/// holds after its head. Chunks of them are concatenated as they are (a repeated field's entries
/// follow one another), so a check's spans are encoded once, when it submits them.
void append_spans(std::span<const trace::Span> spans, std::string& out);

/// append_spans' bytes written at the start of `scratch` (a buffer kept by its thread: grown
/// when too small, never shrunk or cleared, so its old bytes cost no zero fill) and returned
/// as a view of it, valid until its next use.
[[nodiscard]] std::string_view encode_spans(std::span<const trace::Span> spans, std::string& scratch);

/// The request's bytes before its spans (`out` overwritten): ExportTraceServiceRequest,
/// ResourceSpans with the resource, ScopeSpans with the scope, their lengths counting
/// `spans_bytes` bytes of append_spans' output sent right after it.
void encode_request_head(const ServiceResource& resource, std::size_t spans_bytes, std::string& out);

}  // namespace ratelimitd::otlp
