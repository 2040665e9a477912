// JsonWriter: JSON tokens appended to one string, escaped as nlohmann's dump() escapes.
#include "ratelimitd/http/json_writer.hpp"

#include "ratelimitd/core/hex.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <stdexcept>

namespace ratelimitd::http {

namespace {

// Bytes a JSON string cannot carry as they are: the quote, the backslash and controls.
constexpr bool needs_escape(unsigned char c) noexcept { return c == '"' || c == '\\' || c < 0x20; }

void append_escape(PooledString& out, unsigned char c) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
        out += "\\u00";
        out += hex_digit(c >> 4U);
        out += hex_digit(c);
    }
}

// Appends `s` quoted and escaped, the bytes between escapes in runs (one append each, not
// one per byte). false, with `out` as it was, when `s` holds a byte >= 0x80: UTF-8 to check.
bool append_escaped_ascii(PooledString& out, std::string_view s) {
    const std::size_t start = out.size();
    out += '"';
    std::size_t run = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            out.resize(start);
            return false;
        }
        if (!needs_escape(c)) continue;
        out.append(s.data() + run, i - run);
        append_escape(out, c);
        run = i + 1;
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
    return true;
}

}  // namespace

JsonWriter::JsonWriter(std::size_t reserve) { out_.reserve(reserve); }

void JsonWriter::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (depth_ > 0) {
        if (has_items_[depth_ - 1]) out_ += ',';
        has_items_[depth_ - 1] = true;
    }
}

void JsonWriter::open(char c) {
    if (depth_ == max_depth) throw std::length_error("JsonWriter: nested deeper than max_depth");
    before_value();
    out_ += c;
    has_items_[depth_++] = false;
}

JsonWriter& JsonWriter::begin_object() {
    open('{');
    return *this;
}

JsonWriter& JsonWriter::end_object() {
    out_ += '}';
    --depth_;
    return *this;
}

JsonWriter& JsonWriter::begin_array() {
    open('[');
    return *this;
}

JsonWriter& JsonWriter::end_array() {
    out_ += ']';
    --depth_;
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
    string(name);
    out_ += ':';
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::literal_key(std::string_view name) {
    assert(std::none_of(name.begin(), name.end(), [](char c) {
        return needs_escape(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80;
    }));
    before_value();
    out_ += '"';
    out_ += name;
    out_ += "\":";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
    before_value();
    if (!append_escaped_ascii(out_, text)) {
        // Rare (every field the answers carry is validated ASCII): let nlohmann check the
        // UTF-8 and replace what is invalid.
        out_ += nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return *this;
}

JsonWriter& JsonWriter::number(std::int64_t n) {
    before_value();
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, n);
    out_.append(buf, r.ptr);
    return *this;
}

JsonWriter& JsonWriter::boolean(bool b) {
    before_value();
    out_ += b ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null() {
    before_value();
    out_ += "null";
    return *this;
}

PooledString JsonWriter::take() {
    depth_ = 0;
    after_key_ = false;
    return std::move(out_);
}

}  // namespace ratelimitd::http
