// to_hex and friends: one digit table for the whole project.
#include "ratelimitd/core/hex.hpp"

namespace ratelimitd {

char hex_digit(unsigned nibble, HexCase letters) noexcept {
    static constexpr char lower[] = "0123456789abcdef";
    static constexpr char upper[] = "0123456789ABCDEF";
    return (letters == HexCase::upper ? upper : lower)[nibble & 0xf];
}

void append_hex(std::string& out, unsigned char byte, HexCase letters) {
    out.push_back(hex_digit(byte >> 4, letters));
    out.push_back(hex_digit(byte, letters));
}

std::string to_hex(std::span<const unsigned char> bytes, HexCase letters) {
    std::string out;
    out.reserve(2 * bytes.size());
    for (unsigned char b : bytes) append_hex(out, b, letters);
    return out;
}

std::string to_hex(std::string_view bytes, HexCase letters) {
    return to_hex(std::span(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()), letters);
}

}  // namespace ratelimitd
