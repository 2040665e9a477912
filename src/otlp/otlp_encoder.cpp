// The encoder: field by field, as trace.proto, common.proto, resource.proto and trace_service.proto
// number them (the numbers are the schema's; tests/unit/otlp decodes the bytes with the generated
// classes to hold this file to it).
#include "ratelimitd/otlp/otlp_encoder.hpp"

#include "ratelimitd/otlp/wire_writer.hpp"

#include <bit>
#include <type_traits>
#include <variant>

namespace ratelimitd::otlp {
namespace {

// ExportTraceServiceRequest.resource_spans; ResourceSpans.resource, .scope_spans;
// Resource.attributes; ScopeSpans.scope, .spans; InstrumentationScope.name, .version.
constexpr std::uint32_t request_resource_spans = 1;
constexpr std::uint32_t resource_spans_resource = 1;
constexpr std::uint32_t resource_spans_scope_spans = 2;
constexpr std::uint32_t resource_attributes = 1;
constexpr std::uint32_t scope_spans_scope = 1;
constexpr std::uint32_t scope_spans_spans = 2;
constexpr std::uint32_t scope_name = 1;
constexpr std::uint32_t scope_version = 2;
// Span's fields.
constexpr std::uint32_t span_trace_id = 1;
constexpr std::uint32_t span_span_id = 2;
constexpr std::uint32_t span_trace_state = 3;
constexpr std::uint32_t span_parent_span_id = 4;
constexpr std::uint32_t span_name = 5;
constexpr std::uint32_t span_kind = 6;
constexpr std::uint32_t span_start_time = 7;
constexpr std::uint32_t span_end_time = 8;
constexpr std::uint32_t span_attributes = 9;
constexpr std::uint32_t span_status = 15;
constexpr std::uint32_t span_flags = 16;
// Status; KeyValue; AnyValue's oneof.
constexpr std::uint32_t status_message = 2;
constexpr std::uint32_t status_code = 3;
constexpr std::uint32_t key_value_key = 1;
constexpr std::uint32_t key_value_value = 2;
constexpr std::uint32_t any_string = 1;
constexpr std::uint32_t any_bool = 2;
constexpr std::uint32_t any_int = 3;
constexpr std::uint32_t any_double = 4;

template <class Id>
std::string_view bytes_of(const Id& id) {
    return {reinterpret_cast<const char*>(id.data()), id.size()};
}

void write_value(WireWriter& w, const trace::Attribute::Value& value) {
    std::visit(
        [&w](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) w.bytes_field(any_string, v);
            else if constexpr (std::is_same_v<T, trace::StaticText>) w.bytes_field(any_string, v.text);
            // int64 is a plain varint: a negative value is its two's complement, ten bytes.
            else if constexpr (std::is_same_v<T, std::int64_t>) w.varint_field(any_int, static_cast<std::uint64_t>(v));
            else if constexpr (std::is_same_v<T, bool>) w.varint_field(any_bool, v ? 1 : 0);
            else w.fixed64_field(any_double, std::bit_cast<std::uint64_t>(v));
        },
        value);
}

void write_attribute(WireWriter& w, std::uint32_t field, std::string_view key, const trace::Attribute::Value& value) {
    const auto kv = w.open(field);
    w.bytes_field(key_value_key, key);
    const auto any = w.open(key_value_value);
    write_value(w, value);
    w.close(any);
    w.close(kv);
}

void write_span(WireWriter& w, const trace::Span& span) {
    const auto body = w.open(scope_spans_spans);
    w.bytes_field(span_trace_id, bytes_of(span.trace_id));
    w.bytes_field(span_span_id, bytes_of(span.span_id));
    if (!span.tracestate.empty()) w.bytes_field(span_trace_state, span.tracestate);
    if (!trace::is_zero(span.parent_span_id)) w.bytes_field(span_parent_span_id, bytes_of(span.parent_span_id));
    w.bytes_field(span_name, span.name);
    w.varint_field(span_kind, static_cast<std::uint64_t>(span.kind));
    w.fixed64_field(span_start_time, span.start_unix_nano);
    w.fixed64_field(span_end_time, span.end_unix_nano);
    for (const auto& a : span.attributes) write_attribute(w, span_attributes, a.key, a.value);
    if (span.status != trace::StatusCode::unset) {
        const auto status = w.open(span_status);
        if (!span.status_message.empty()) w.bytes_field(status_message, span.status_message);
        w.varint_field(status_code, static_cast<std::uint64_t>(span.status));
        w.close(status);
    }
    // Every exported span was sampled: its trace flags' sampled bit.
    w.fixed32_field(span_flags, trace::sampled_flag);
    w.close(body);
}

void write_resource(WireWriter& w, const ServiceResource& resource) {
    const auto body = w.open(resource_spans_resource);
    const std::pair<std::string_view, const std::string*> attributes[] = {
        {"service.name", &resource.name},
        {"service.namespace", &resource.namespace_},
        {"service.instance.id", &resource.instance_id},
        {"service.version", &resource.version},
    };
    for (const auto& [key, value] : attributes) {
        if (!value->empty()) write_attribute(w, resource_attributes, key, trace::StaticText{*value});
    }
    w.close(body);
}

}  // namespace

void encode_export_request(const ServiceResource& resource, std::span<const trace::Span> spans, std::string& out) {
    out.clear();
    WireWriter w(out);
    const auto resource_spans = w.open(request_resource_spans);
    write_resource(w, resource);
    const auto scope_spans = w.open(resource_spans_scope_spans);
    const auto scope = w.open(scope_spans_scope);
    w.bytes_field(scope_name, "ratelimitd");
    if (!resource.version.empty()) w.bytes_field(scope_version, resource.version);
    w.close(scope);
    for (const auto& span : spans) write_span(w, span);
    w.close(scope_spans);
    w.close(resource_spans);
}

}  // namespace ratelimitd::otlp
