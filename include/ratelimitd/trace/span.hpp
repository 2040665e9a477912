// A finished span as OTLP carries it (opentelemetry.proto.trace.v1.Span): ids, name, kind,
// times in Unix nanoseconds, status and attributes. A value: built by a door, queued, encoded.
#pragma once

#include "ratelimitd/trace/span_context.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ratelimitd::trace {

/// Span.SpanKind's numbers (trace.proto): a door's span is a server span, the store call a
/// client span (it leaves the process when the store is Redis).
enum class SpanKind : std::uint8_t { internal = 1, server = 2, client = 3 };

/// Status.StatusCode's numbers: a denial is not an error (the check worked); a degraded
/// decision (the store failed) and a refused request are.
enum class StatusCode : std::uint8_t { unset = 0, ok = 1, error = 2 };

/// A value of static storage (a literal, an enum's name): held as a view, never copied, so the
/// attributes a check sets from a fixed set of words cost no allocation.
struct StaticText {
    std::string_view text;
};

/// One attribute. Keys are the semantic conventions' names or ours (ratelimit.*), always string
/// literals: a span holds no copy of them.
struct Attribute {
    using Value = std::variant<std::string, StaticText, std::int64_t, bool, double>;
    std::string_view key;
    Value value;
};

/// Room for a door span's attributes (HTTP or RPC conventions plus ratelimit.*), reserved once.
inline constexpr std::size_t typical_attributes = 16;

struct Span {
    TraceId trace_id{};
    SpanId span_id{};
    SpanId parent_span_id{};  ///< all zero: a root
    std::string tracestate;   ///< the parent's, passed on
    std::string name;
    SpanKind kind = SpanKind::internal;
    std::uint64_t start_unix_nano = 0;
    std::uint64_t end_unix_nano = 0;
    StatusCode status = StatusCode::unset;
    std::string status_message;
    std::vector<Attribute> attributes;

    // emplace_back: the attribute's value is made in place (no temporary Attribute moved in).
    void add(std::string_view key, std::string value) { attributes.emplace_back(key, std::move(value)); }
    void add(std::string_view key, std::int64_t value) { attributes.emplace_back(key, value); }
    void add(std::string_view key, bool value) { attributes.emplace_back(key, value); }
    /// `value` must be of static storage (a literal or an enum's name); a string literal would
    /// otherwise pick the bool overload.
    void add(std::string_view key, const char* value) { attributes.emplace_back(key, StaticText{value}); }
    void add(std::string_view key, StaticText value) { attributes.emplace_back(key, value); }
};

}  // namespace ratelimitd::trace
