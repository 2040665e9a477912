// The encoder: a span in one pass (its length filled in after, WireWriter::close_late), the
// request head from the spans' byte count, field by field as trace.proto, common.proto,
// resource.proto and trace_service.proto number them (the numbers are the schema's;
// tests/unit/otlp decodes the bytes with the generated classes to hold this file to it).
#include "ratelimitd/otlp/otlp_encoder.hpp"

#include "ratelimitd/otlp/wire_writer.hpp"

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

// An attribute's value as the wire sees it, read by one visit: AnyValue's field, and its text
// (string_value) or its number (int_value and bool_value as varints, double_value's bits).
struct WireValue {
    std::uint32_t field = any_string;
    std::string_view text;
    std::uint64_t number = 0;
};

WireValue wire_value(const trace::Attribute::Value& value) {
    return std::visit(
        [](const auto& v) -> WireValue {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) return {any_string, v, 0};
            else if constexpr (std::is_same_v<T, trace::StaticText>) return {any_string, v.text, 0};
            // int64 is a plain varint: a negative value is its two's complement, ten bytes.
            else if constexpr (std::is_same_v<T, std::int64_t>) return {any_int, {}, static_cast<std::uint64_t>(v)};
            else if constexpr (std::is_same_v<T, bool>) return {any_bool, {}, v ? 1u : 0u};
            else return {any_double, {}, std::bit_cast<std::uint64_t>(v)};
        },
        value);
}

// AnyValue's one field: the bytes it takes.
std::size_t any_value_size(const WireValue& v) {
    switch (v.field) {
    case any_string: return delimited_size(any_string, v.text.size());
    case any_double: return tag_size(any_double) + 8;
    default: return tag_size(v.field) + varint_size(v.number);
    }
}

// A KeyValue's body.
std::size_t key_value_size(std::string_view key, const WireValue& value) {
    return delimited_size(key_value_key, key.size()) + delimited_size(key_value_value, any_value_size(value));
}

std::size_t key_value_size(std::string_view key, const trace::Attribute::Value& value) {
    return key_value_size(key, wire_value(value));
}

// Below this, a key and a string value make a KeyValue under 128 bytes (2 + 59 + 2 + 2 + 59, or
// a number's at most 11): every length is one byte, written as it is.
constexpr std::size_t short_text = 60;

// A KeyValue up to its AnyValue's field: the entry's tag and length, the key, the AnyValue's tag
// and length; `any` bytes, the value's field, follow.
[[gnu::always_inline]] inline void write_key_value_head(WireWriter& w, std::uint32_t field, std::string_view key,
                                                        std::size_t any) {
    if (key.size() < short_text && any <= short_text + 1 && field < 16) {
        // The common attribute (a door's all are): the same bytes as below, without the varints'
        // loops.
        w.byte(static_cast<std::uint8_t>(field << 3 | 2));
        w.byte(static_cast<std::uint8_t>(4 + key.size() + any));
        w.byte(key_value_key << 3 | 2);
        w.byte(static_cast<std::uint8_t>(key.size()));
        w.raw(key);
        w.byte(key_value_value << 3 | 2);
        w.byte(static_cast<std::uint8_t>(any));
        return;
    }
    w.open(field, delimited_size(key_value_key, key.size()) + delimited_size(key_value_value, any));
    w.bytes_field(key_value_key, key);
    w.open(key_value_value, any);
}

std::string_view text_of(const std::string& text) { return text; }
std::string_view text_of(trace::StaticText text) { return text.text; }

// One visit: each kind of value knows its AnyValue field's size and writes it, with no second
// dispatch on the kind (this runs 17 times a traced check).
void write_attribute(WireWriter& w, std::uint32_t field, std::string_view key, const trace::Attribute::Value& value) {
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, trace::StaticText>) {
                const std::string_view text = text_of(v);
                write_key_value_head(w, field, key, delimited_size(any_string, text.size()));
                w.bytes_field(any_string, text);
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                // int64 is a plain varint: a negative value is its two's complement, ten bytes.
                const auto number = static_cast<std::uint64_t>(v);
                write_key_value_head(w, field, key, tag_size(any_int) + varint_size(number));
                w.varint_field(any_int, number);
            } else if constexpr (std::is_same_v<T, bool>) {
                write_key_value_head(w, field, key, tag_size(any_bool) + 1);
                w.varint_field(any_bool, v ? 1u : 0u);
            } else {
                write_key_value_head(w, field, key, tag_size(any_double) + 8);
                w.fixed64_field(any_double, std::bit_cast<std::uint64_t>(v));
            }
        },
        value);
}

std::size_t status_size(const trace::Span& span) {
    if (span.status == trace::StatusCode::unset) return 0;
    const std::size_t message = span.status_message.empty() ? 0 : delimited_size(status_message, span.status_message.size());
    return message + tag_size(status_code) + varint_size(static_cast<std::uint64_t>(span.status));
}

// Bytes a span's entry can take at most: every varint at its widest, so the buffer is grown
// once and the span written in one pass (its exact length filled in after, close_late).
std::size_t span_bound(const trace::Span& span) {
    constexpr std::size_t field_overhead = 11;  // a tag byte and a 10-byte varint
    // 13 fields and nested messages (the entry itself, ids, tracestate, name, kind, times,
    // status, its message and code, flags), rounded up; the ids' 32 bytes, times' 16, flags' 4.
    std::size_t n = 16 * field_overhead + 32 + 16 + 4 + span.tracestate.size() + span.name.size() +
                    span.status_message.size();
    for (const auto& a : span.attributes) {
        n += 4 * field_overhead + a.key.size() + 8;
        if (const auto* text = std::get_if<std::string>(&a.value)) n += text->size();
        else if (const auto* view = std::get_if<trace::StaticText>(&a.value)) n += view->text.size();
    }
    return n;
}

// A span's entry is most often 128 to 16,383 bytes: its length is given two bytes, moved when
// it needs another number.
constexpr std::size_t span_length_bytes = 2;

void write_span(WireWriter& w, const trace::Span& span) {
    char* const length_at = w.open_late(scope_spans_spans, span_length_bytes);
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
    w.close_late(length_at, span_length_bytes);
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
    std::size_t bound = 0;
    for (const auto& span : spans) bound += span_bound(span);
    const std::size_t at = out.size();
    out.resize(at + bound);
    WireWriter w(out.data() + at);
    for (const auto& span : spans) write_span(w, span);
    out.resize(static_cast<std::size_t>(w.position() - out.data()));
}

std::string_view encode_spans(std::span<const trace::Span> spans, std::string& scratch) {
    std::size_t bound = 0;
    for (const auto& span : spans) bound += span_bound(span);
    // Grown (and zero filled) only past its largest use: a reused buffer is written over as it is.
    if (scratch.size() < bound) scratch.resize(bound);
    WireWriter w(scratch.data());
    for (const auto& span : spans) write_span(w, span);
    return {scratch.data(), static_cast<std::size_t>(w.position() - scratch.data())};
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
