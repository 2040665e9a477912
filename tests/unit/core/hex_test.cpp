// to_hex / append_hex / hex_digit: every byte value, both cases, and the nibble order.
#include "ratelimitd/core/hex.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace {

using ratelimitd::append_hex;
using ratelimitd::hex_digit;
using ratelimitd::HexCase;
using ratelimitd::to_hex;

TEST(Hex, DigitsOfEveryNibbleInBothCases) {
    const std::string lower = "0123456789abcdef";
    const std::string upper = "0123456789ABCDEF";
    for (unsigned n = 0; n < 16; ++n) {
        EXPECT_EQ(hex_digit(n), lower[n]) << n;
        EXPECT_EQ(hex_digit(n, HexCase::upper), upper[n]) << n;
        EXPECT_EQ(hex_digit(n + 0x10), lower[n]) << "only the low four bits count";
    }
}

TEST(Hex, EveryByteIsTwoDigitsHighNibbleFirst) {
    for (unsigned b = 0; b < 256; ++b) {
        std::string out;
        append_hex(out, static_cast<unsigned char>(b));
        ASSERT_EQ(out.size(), 2u);
        EXPECT_EQ(std::stoul(out, nullptr, 16), b) << out;
        EXPECT_EQ(out.find_first_not_of("0123456789abcdef"), std::string::npos) << out;
    }
}

TEST(Hex, EncodesBytesInOrder) {
    const std::array<unsigned char, 4> bytes{0x00, 0x0f, 0xa5, 0xff};
    EXPECT_EQ(to_hex(bytes), "000fa5ff");
    EXPECT_EQ(to_hex(bytes, HexCase::upper), "000FA5FF");
    EXPECT_EQ(to_hex(std::string_view("\x01\x80z", 3)), "01807a");
    EXPECT_EQ(to_hex(std::string_view{}), "");
}

}  // namespace
