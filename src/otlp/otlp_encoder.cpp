// The encoder: field by field, as trace.proto numbers them.
#include "ratelimitd/otlp/otlp_encoder.hpp"

#include <type_traits>
#include <variant>

namespace ratelimitd::otlp {
namespace {

namespace otel = opentelemetry::proto;

void set_value(otel::common::v1::AnyValue& out, const trace::Attribute& a) {
    std::visit(
        [&out](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, std::string>) out.set_string_value(value);
            else if constexpr (std::is_same_v<T, std::int64_t>) out.set_int_value(value);
            else if constexpr (std::is_same_v<T, bool>) out.set_bool_value(value);
            else out.set_double_value(value);
        },
        a.value);
}

void add_string(google::protobuf::RepeatedPtrField<otel::common::v1::KeyValue>& out, std::string_view key,
                const std::string& value) {
    if (value.empty()) return;
    auto* kv = out.Add();
    kv->set_key(std::string(key));
    kv->mutable_value()->set_string_value(value);
}

template <class Id>
std::string bytes_of(const Id& id) {
    return std::string(reinterpret_cast<const char*>(id.data()), id.size());
}

void encode_span(otel::trace::v1::Span& out, const trace::Span& span) {
    out.set_trace_id(bytes_of(span.trace_id));
    out.set_span_id(bytes_of(span.span_id));
    if (!trace::is_zero(span.parent_span_id)) out.set_parent_span_id(bytes_of(span.parent_span_id));
    if (!span.tracestate.empty()) out.set_trace_state(span.tracestate);
    // Every exported span was sampled: its trace flags' sampled bit.
    out.set_flags(trace::sampled_flag);
    out.set_name(span.name);
    out.set_kind(static_cast<otel::trace::v1::Span_SpanKind>(span.kind));
    out.set_start_time_unix_nano(span.start_unix_nano);
    out.set_end_time_unix_nano(span.end_unix_nano);
    for (const auto& a : span.attributes) {
        auto* kv = out.add_attributes();
        kv->set_key(std::string(a.key));
        set_value(*kv->mutable_value(), a);
    }
    if (span.status != trace::StatusCode::unset) {
        out.mutable_status()->set_code(static_cast<otel::trace::v1::Status_StatusCode>(span.status));
        if (!span.status_message.empty()) out.mutable_status()->set_message(span.status_message);
    }
}

}  // namespace

otel::collector::trace::v1::ExportTraceServiceRequest encode_export_request(const ServiceResource& resource,
                                                                          std::span<const trace::Span> spans) {
    otel::collector::trace::v1::ExportTraceServiceRequest request;
    auto* resource_spans = request.add_resource_spans();
    auto& attributes = *resource_spans->mutable_resource()->mutable_attributes();
    add_string(attributes, "service.name", resource.name);
    add_string(attributes, "service.namespace", resource.namespace_);
    add_string(attributes, "service.instance.id", resource.instance_id);
    add_string(attributes, "service.version", resource.version);
    auto* scope_spans = resource_spans->add_scope_spans();
    scope_spans->mutable_scope()->set_name("ratelimitd");
    scope_spans->mutable_scope()->set_version(resource.version);
    for (const auto& span : spans) encode_span(*scope_spans->add_spans(), span);
    return request;
}

}  // namespace ratelimitd::otlp
