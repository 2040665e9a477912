// The encoder: sizes first, then the bytes, field by field as trace.proto, common.proto,
// resource.proto and trace_service.proto number them (the numbers are the schema's;
// tests/unit/otlp decodes the bytes with the generated classes to hold this file to it).
#include "ratelimitd/otlp/otlp_encoder.hpp"

#include "ratelimitd/otlp/wire_writer.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
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

// AnyValue's one field: its number, and the bytes it takes.
std::size_t any_value_size(const trace::Attribute::Value& value) {
    return std::visit(
        [](const auto& v) -> std::size_t {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) return delimited_size(any_string, v.size());
            else if constexpr (std::is_same_v<T, trace::StaticText>) return delimited_size(any_string, v.text.size());
            // int64 is a plain varint: a negative value is its two's complement, ten bytes.
            else if constexpr (std::is_same_v<T, std::int64_t>) return tag_size(any_int) + varint_size(static_cast<std::uint64_t>(v));
            else if constexpr (std::is_same_v<T, bool>) return tag_size(any_bool) + 1;
            else return tag_size(any_double) + 8;
        },
        value);
}

void write_value(WireWriter& w, const trace::Attribute::Value& value) {
    std::visit(
        [&w](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) w.bytes_field(any_string, v);
            else if constexpr (std::is_same_v<T, trace::StaticText>) w.bytes_field(any_string, v.text);
            else if constexpr (std::is_same_v<T, std::int64_t>) w.varint_field(any_int, static_cast<std::uint64_t>(v));
            else if constexpr (std::is_same_v<T, bool>) w.varint_field(any_bool, v ? 1 : 0);
            else w.fixed64_field(any_double, std::bit_cast<std::uint64_t>(v));
        },
        value);
}

// A KeyValue's body.
std::size_t key_value_size(std::string_view key, const trace::Attribute::Value& value) {
    return delimited_size(key_value_key, key.size()) + delimited_size(key_value_value, any_value_size(value));
}

void write_attribute(WireWriter& w, std::uint32_t field, std::string_view key, const trace::Attribute::Value& value) {
    const std::size_t any = any_value_size(value);
    w.open(field, delimited_size(key_value_key, key.size()) + delimited_size(key_value_value, any));
    w.bytes_field(key_value_key, key);
    w.open(key_value_value, any);
    write_value(w, value);
}

std::size_t status_size(const trace::Span& span) {
    if (span.status == trace::StatusCode::unset) return 0;
    const std::size_t message = span.status_message.empty() ? 0 : delimited_size(status_message, span.status_message.size());
    return message + tag_size(status_code) + varint_size(static_cast<std::uint64_t>(span.status));
}

std::size_t span_size(const trace::Span& span) {
    std::size_t n = delimited_size(span_trace_id, 16) + delimited_size(span_span_id, 8);
    if (!span.tracestate.empty()) n += delimited_size(span_trace_state, span.tracestate.size());
    if (!trace::is_zero(span.parent_span_id)) n += delimited_size(span_parent_span_id, 8);
    n += delimited_size(span_name, span.name.size());
    n += tag_size(span_kind) + varint_size(static_cast<std::uint64_t>(span.kind));
    n += 2 * (tag_size(span_start_time) + 8);
    for (const auto& a : span.attributes) n += delimited_size(span_attributes, key_value_size(a.key, a.value));
    if (span.status != trace::StatusCode::unset) n += delimited_size(span_status, status_size(span));
    return n + tag_size(span_flags) + 4;
}

// `size`: span_size(span), computed once by the caller (it also sized the buffer with it).
void write_span(WireWriter& w, const trace::Span& span, std::size_t size) {
    w.open(scope_spans_spans, size);
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
        w.open(span_status, status_size(span));
        if (!span.status_message.empty()) w.bytes_field(status_message, span.status_message);
        w.varint_field(status_code, static_cast<std::uint64_t>(span.status));
    }
    // Every exported span was sampled: its trace flags' sampled bit.
    w.fixed32_field(span_flags, trace::sampled_flag);
}

// The service.* attributes that are set, in the resource's order.
struct ResourceAttributes {
    std::pair<std::string_view, std::string_view> items[4];
    std::size_t count = 0;

    explicit ResourceAttributes(const ServiceResource& r) {
        for (const auto& [key, value] : {std::pair<std::string_view, std::string_view>{"service.name", r.name},
                                         {"service.namespace", r.namespace_},
                                         {"service.instance.id", r.instance_id},
                                         {"service.version", r.version}}) {
            if (!value.empty()) items[count++] = {key, value};
        }
    }
    [[nodiscard]] std::size_t size() const {
        std::size_t n = 0;
        for (std::size_t i = 0; i < count; ++i) {
            n += delimited_size(resource_attributes, key_value_size(items[i].first, trace::StaticText{items[i].second}));
        }
        return n;
    }
    void write(WireWriter& w) const {
        for (std::size_t i = 0; i < count; ++i) {
            write_attribute(w, resource_attributes, items[i].first, trace::StaticText{items[i].second});
        }
    }
};

std::size_t scope_size(const ServiceResource& resource) {
    const std::size_t version = resource.version.empty() ? 0 : delimited_size(scope_version, resource.version.size());
    return delimited_size(scope_name, std::string_view("ratelimitd").size()) + version;
}

}  // namespace

void append_spans(std::span<const trace::Span> spans, std::string& out) {
    // A check's spans are few: their sizes fit on the stack, each computed once.
    constexpr std::size_t on_stack = 8;
    if (spans.size() > on_stack) {
        for (std::size_t i = 0; i < spans.size(); i += on_stack) append_spans(spans.subspan(i, std::min(on_stack, spans.size() - i)), out);
        return;
    }
    std::size_t sizes[on_stack];
    std::size_t total = 0;
    for (std::size_t i = 0; i < spans.size(); ++i) {
        sizes[i] = span_size(spans[i]);
        total += delimited_size(scope_spans_spans, sizes[i]);
    }
    const std::size_t at = out.size();
    out.resize(at + total);
    WireWriter w(out.data() + at);
    for (std::size_t i = 0; i < spans.size(); ++i) write_span(w, spans[i], sizes[i]);
    assert(w.position() == out.data() + out.size());  // the sizes and the bytes agree
}

void encode_request_head(const ServiceResource& resource, std::size_t spans_bytes, std::string& out) {
    const ResourceAttributes attributes(resource);
    const std::size_t scope_spans = delimited_size(scope_spans_scope, scope_size(resource)) + spans_bytes;
    const std::size_t resource_spans =
        delimited_size(resource_spans_resource, attributes.size()) + delimited_size(resource_spans_scope_spans, scope_spans);
    // Everything but the spans' own bytes, which follow it.
    out.resize(delimited_size(request_resource_spans, resource_spans) - spans_bytes);
    WireWriter w(out.data());
    w.open(request_resource_spans, resource_spans);
    w.open(resource_spans_resource, attributes.size());
    attributes.write(w);
    w.open(resource_spans_scope_spans, scope_spans);
    w.open(scope_spans_scope, scope_size(resource));
    w.bytes_field(scope_name, "ratelimitd");
    if (!resource.version.empty()) w.bytes_field(scope_version, resource.version);
    assert(w.position() == out.data() + out.size());
}

void encode_export_request(const ServiceResource& resource, std::span<const trace::Span> spans, std::string& out) {
    std::string spans_bytes;
    append_spans(spans, spans_bytes);
    encode_request_head(resource, spans_bytes.size(), out);
    out += spans_bytes;
}

}  // namespace ratelimitd::otlp
