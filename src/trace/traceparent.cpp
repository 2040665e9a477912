// traceparent: fixed offsets, lower-case hex only (§3.2.2: upper case is invalid).
#include "ratelimitd/trace/traceparent.hpp"

#include "ratelimitd/core/hex.hpp"

#include <span>

namespace ratelimitd::trace {
namespace {

// Version 00's exact length: 2 + 1 + 32 + 1 + 16 + 1 + 2.
constexpr std::size_t version_00_length = 55;
constexpr std::size_t trace_id_offset = 3;
constexpr std::size_t span_id_offset = 36;
constexpr std::size_t flags_offset = 53;

int lower_hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// Decodes 2 * out.size() lower-case hex digits; false on any other character.
bool decode_hex(std::string_view digits, std::span<std::uint8_t> out) noexcept {
    for (std::size_t i = 0; i < out.size(); ++i) {
        const int high = lower_hex_value(digits[2 * i]);
        const int low = lower_hex_value(digits[2 * i + 1]);
        if (high < 0 || low < 0) return false;
        out[i] = static_cast<std::uint8_t>(high << 4 | low);
    }
    return true;
}

}  // namespace

std::optional<SpanContext> parse_traceparent(std::string_view header) noexcept {
    if (header.size() < version_00_length) return std::nullopt;
    if (header[2] != '-' || header[35] != '-' || header[52] != '-') return std::nullopt;
    std::uint8_t version = 0;
    if (!decode_hex(header.substr(0, 2), std::span(&version, 1)) || version == 0xff) return std::nullopt;
    // Version 00 is exactly 55 characters; a later version may append fields after a '-'
    // (§3.2.4: parse what version 00 defines and ignore the rest).
    if (version == 0 && header.size() != version_00_length) return std::nullopt;
    if (header.size() > version_00_length && header[version_00_length] != '-') return std::nullopt;
    SpanContext parent;
    if (!decode_hex(header.substr(trace_id_offset, 32), parent.trace_id)) return std::nullopt;
    if (!decode_hex(header.substr(span_id_offset, 16), parent.span_id)) return std::nullopt;
    if (!decode_hex(header.substr(flags_offset, 2), std::span(&parent.flags, 1))) return std::nullopt;
    if (is_zero(parent.trace_id) || is_zero(parent.span_id)) return std::nullopt;
    return parent;
}

std::string format_traceparent(const TraceId& trace_id, const SpanId& span_id, bool sampled) {
    std::string out;
    out.reserve(version_00_length);
    out += "00-";
    for (std::uint8_t b : trace_id) append_hex(out, b);
    out += '-';
    for (std::uint8_t b : span_id) append_hex(out, b);
    out += sampled ? "-01" : "-00";
    return out;
}

}  // namespace ratelimitd::trace
