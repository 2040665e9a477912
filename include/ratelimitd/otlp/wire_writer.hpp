// Protocol Buffers' wire format written by hand (the encoding spec: varints, fixed64/fixed32,
// length-delimited fields), so a span becomes OTLP bytes without a message object or an
// allocation per field. Appends to a caller's string, reused across batches.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ratelimitd::otlp {

class WireWriter {
public:
    explicit WireWriter(std::string& out) noexcept : out_(out) {}

    /// Wire types 0 (varint), 1 (64-bit), 2 (length-delimited), 5 (32-bit).
    void varint_field(std::uint32_t field, std::uint64_t value) {
        tag(field, 0);
        varint(value);
    }
    void fixed64_field(std::uint32_t field, std::uint64_t value);
    void fixed32_field(std::uint32_t field, std::uint32_t value);
    void bytes_field(std::uint32_t field, std::string_view bytes);

    /// A nested message: open() writes its tag and returns where its body starts; close() puts
    /// the body's length (a minimal varint) in front of it once the body is written.
    [[nodiscard]] std::size_t open(std::uint32_t field) {
        tag(field, 2);
        return out_.size();
    }
    void close(std::size_t body_start);

private:
    void tag(std::uint32_t field, std::uint32_t wire_type) { varint(std::uint64_t{field} << 3 | wire_type); }
    void varint(std::uint64_t value);

    std::string& out_;
};

}  // namespace ratelimitd::otlp
