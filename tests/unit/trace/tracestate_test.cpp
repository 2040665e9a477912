// normalize_tracestate: the list grammar, white space and empty members, and every bound that
// drops the header whole.
#include "ratelimitd/trace/tracestate.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using ratelimitd::trace::normalize_tracestate;

TEST(Tracestate, KeepsValidMembersInOrderWithoutWhiteSpace) {
    EXPECT_EQ(normalize_tracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"), "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    EXPECT_EQ(normalize_tracestate(" rojo=1 ,\t, congo=2,"), "rojo=1,congo=2");
    EXPECT_EQ(normalize_tracestate("fw529a3039@dt=1,0tenant@sys=a b"), "fw529a3039@dt=1,0tenant@sys=a b");
    EXPECT_EQ(normalize_tracestate(""), "");
}

TEST(Tracestate, AnInvalidMemberDropsTheHeader) {
    const std::string cases[] = {
        "Rojo=1",               // a key starts lower case
        "1abc=1",               // a simple key starts with a letter
        "rojo",                 // no '='
        "rojo=",                // empty value
        "rojo=1,rojo=2",        // a repeated key
        "rojo=a=b",             // '=' in the value
        "a@=1",                 // empty system id
        "t@sys_too_long_xy=1",  // a system id of 15 characters (14 at most)
        "rojo=1,congo=\x01",    // a control character in a value
    };
    for (const auto& header : cases) EXPECT_FALSE(normalize_tracestate(header).has_value()) << header;
}

TEST(Tracestate, WhiteSpaceAroundAMemberIsTheLists) {
    EXPECT_EQ(normalize_tracestate("rojo=ends "), "rojo=ends");
    EXPECT_EQ(normalize_tracestate("rojo=a b"), "rojo=a b") << "an inner space is part of the value";
    EXPECT_EQ(normalize_tracestate("t@sys_too_long_x=1"), "t@sys_too_long_x=1") << "14 characters";
}

TEST(Tracestate, ThirtyTwoMembersPassAndThirtyThreeDrop) {
    std::string header;
    for (int i = 0; i < 32; ++i) header += (i ? ",k" : "k") + std::to_string(i) + "=v";
    EXPECT_EQ(normalize_tracestate(header), header);
    EXPECT_FALSE(normalize_tracestate(header + ",k32=v").has_value());
}

TEST(Tracestate, AHeaderOver512BytesDrops) {
    const std::string value_of_255(255, 'x');
    const std::string two = "a=" + value_of_255 + ",b=" + value_of_255;  // 2 + 255 + 1 + 2 + 255 = 515
    ASSERT_EQ(two.size(), 515u);
    EXPECT_FALSE(normalize_tracestate(two).has_value());
    const std::string fits = "a=" + value_of_255 + ",b=" + std::string(252, 'x');  // 512
    ASSERT_EQ(fits.size(), 512u);
    EXPECT_EQ(normalize_tracestate(fits), fits);
}

}  // namespace
