// Protocol Buffers' wire format written by hand (the encoding spec: varints, fixed64/fixed32,
// length-delimited fields), so a span becomes OTLP bytes without a message object or an
// allocation per field. The *_size functions give a message's length (written before its
// body) where it is cheap to know; a span's, known only once written, is filled in after
// (open_late/close_late). WireWriter stores the bytes through a raw cursor into a buffer already
// sized for them: no bounds check or reallocation per byte.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ratelimitd::otlp {

/// Bytes of `value` as a base-128 varint.
[[nodiscard]] constexpr std::size_t varint_size(std::uint64_t value) noexcept {
    std::size_t n = 1;
    while (value >= 0x80) {
        value >>= 7;
        ++n;
    }
    return n;
}

/// Bytes of a field's tag (its number and wire type).
[[nodiscard]] constexpr std::size_t tag_size(std::uint32_t field) noexcept { return varint_size(std::uint64_t{field} << 3); }

/// Bytes of a length-delimited field (bytes, string or nested message) of `length` bytes.
[[nodiscard]] constexpr std::size_t delimited_size(std::uint32_t field, std::size_t length) noexcept {
    return tag_size(field) + varint_size(length) + length;
}

/// Every member is forced inline: a span's attributes make a dozen calls each, and their field
/// numbers are constants the compiler folds into single tag bytes once inlined.
class WireWriter {
public:
    /// Writes from `at`; the caller sized the buffer with the *_size functions.
    explicit WireWriter(char* at) noexcept : at_(at) {}

    /// Wire types 0 (varint), 1 (64-bit), 2 (length-delimited), 5 (32-bit).
    [[gnu::always_inline]] void varint_field(std::uint32_t field, std::uint64_t value) noexcept {
        tag(field, 0);
        varint(value);
    }
    [[gnu::always_inline]] void fixed64_field(std::uint32_t field, std::uint64_t value) noexcept {
        tag(field, 1);
        little_endian(value, 8);
    }
    [[gnu::always_inline]] void fixed32_field(std::uint32_t field, std::uint32_t value) noexcept {
        tag(field, 5);
        little_endian(value, 4);
    }
    [[gnu::always_inline]] void bytes_field(std::uint32_t field, std::string_view bytes) noexcept {
        open(field, bytes.size());
        copy(bytes.data(), bytes.size());
    }
    /// A nested message's tag and length; its `length` bytes of fields follow.
    [[gnu::always_inline]] void open(std::uint32_t field, std::size_t length) noexcept {
        tag(field, 2);
        varint(length);
    }

    /// A nested message whose length is known only once it is written: its tag, then
    /// `reserved` bytes for the length, filled by close_late.
    [[nodiscard]] char* open_late(std::uint32_t field, std::size_t reserved) noexcept {
        tag(field, 2);
        char* length_at = at_;
        at_ += reserved;
        return length_at;
    }
    /// The length of what was written since open_late, put in its place. A length that needs
    /// another number of bytes than were reserved moves the body (protobuf's varints are
    /// minimal: the bytes must be those a generated class writes).
    void close_late(char* length_at, std::size_t reserved) noexcept {
        const std::size_t length = static_cast<std::size_t>(at_ - (length_at + reserved));
        const std::size_t needed = varint_size(length);
        if (needed != reserved) {
            std::memmove(length_at + needed, length_at + reserved, length);
            at_ = length_at + needed + length;
        }
        char* const end = at_;
        at_ = length_at;
        varint(length);
        at_ = end;
    }

    /// One byte, or bytes, as they are: for a caller that knows a tag or a length fits one byte.
    [[gnu::always_inline]] void byte(std::uint8_t b) noexcept { *at_++ = static_cast<char>(b); }
    [[gnu::always_inline]] void raw(std::string_view bytes) noexcept { copy(bytes.data(), bytes.size()); }

    [[nodiscard]] char* position() const noexcept { return at_; }

private:
    [[gnu::always_inline]] void tag(std::uint32_t field, std::uint32_t wire_type) noexcept {
        varint(std::uint64_t{field} << 3 | wire_type);
    }
    [[gnu::always_inline]] void varint(std::uint64_t value) noexcept {
        while (value >= 0x80) {
            *at_++ = static_cast<char>((value & 0x7f) | 0x80);
            value >>= 7;
        }
        *at_++ = static_cast<char>(value);
    }
    [[gnu::always_inline]] void little_endian(std::uint64_t value, int bytes) noexcept {
        if constexpr (std::endian::native == std::endian::little) {
            std::memcpy(at_, &value, static_cast<std::size_t>(bytes));  // one store: `bytes` is a constant here
            at_ += bytes;
        } else {
            for (int i = 0; i < bytes; ++i) *at_++ = static_cast<char>(value >> (8 * i));
        }
    }
    // A span's keys, names and values are mostly 4 to 64 bytes: copied by two overlapping
    // loads and stores of a fixed width, inline, where a memcpy call (its PLT stub and its size
    // dispatch) cost about as much again. Longer ones go to memcpy.
    [[gnu::always_inline]] void copy(const char* from, std::size_t n) noexcept {
        if (n > 64) std::memcpy(at_, from, n);
        else if (n >= 32) overlapping<32>(from, n);
        else if (n >= 16) overlapping<16>(from, n);
        else if (n >= 8) overlapping<8>(from, n);
        else if (n >= 4) overlapping<4>(from, n);
        else
            for (std::size_t i = 0; i < n; ++i) at_[i] = from[i];
        at_ += n;
    }
    // Bytes [0, width) and [n - width, n) of `from` (width <= n <= 2 * width): all of it.
    template <std::size_t width>
    [[gnu::always_inline]] void overlapping(const char* from, std::size_t n) noexcept {
        char head[width];
        char tail[width];
        std::memcpy(head, from, width);
        std::memcpy(tail, from + n - width, width);
        std::memcpy(at_, head, width);
        std::memcpy(at_ + n - width, tail, width);
    }

    char* at_;
};

}  // namespace ratelimitd::otlp
