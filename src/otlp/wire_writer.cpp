// WireWriter: little-endian fixed fields, base-128 varints, lengths inserted after the body.
#include "ratelimitd/otlp/wire_writer.hpp"

namespace ratelimitd::otlp {
namespace {

char* put_varint(char* at, std::uint64_t value) noexcept {
    while (value >= 0x80) {
        *at++ = static_cast<char>((value & 0x7f) | 0x80);
        value >>= 7;
    }
    *at++ = static_cast<char>(value);
    return at;
}

}  // namespace

void WireWriter::varint(std::uint64_t value) {
    char bytes[10];
    out_.append(bytes, put_varint(bytes, value));
}

void WireWriter::fixed64_field(std::uint32_t field, std::uint64_t value) {
    tag(field, 1);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(value >> (8 * i)));
}

void WireWriter::fixed32_field(std::uint32_t field, std::uint32_t value) {
    tag(field, 5);
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>(value >> (8 * i)));
}

void WireWriter::bytes_field(std::uint32_t field, std::string_view bytes) {
    tag(field, 2);
    varint(bytes.size());
    out_.append(bytes);
}

void WireWriter::close(std::size_t body_start) {
    const std::size_t length = out_.size() - body_start;
    char prefix[10];
    const auto n = static_cast<std::size_t>(put_varint(prefix, length) - prefix);
    // The body moves n bytes right: one memmove per nested message, its bytes written once.
    out_.insert(body_start, prefix, n);
}

}  // namespace ratelimitd::otlp
