// Hexadecimal digits of bytes: the one encoder for digests, escapes and ids.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace ratelimitd {

/// Which digits stand for 10..15. Lower case unless a format requires upper case
/// (percent-encoding prefers it, RFC 3986 §2.1).
enum class HexCase { lower, upper };

/// The digit of `nibble` (only its low four bits count).
char hex_digit(unsigned nibble, HexCase letters = HexCase::lower) noexcept;

/// Appends the two digits of `byte`, high nibble first.
void append_hex(std::string& out, unsigned char byte, HexCase letters = HexCase::lower);

/// Two digits per byte, in order.
std::string to_hex(std::span<const unsigned char> bytes, HexCase letters = HexCase::lower);
std::string to_hex(std::string_view bytes, HexCase letters = HexCase::lower);

}  // namespace ratelimitd
