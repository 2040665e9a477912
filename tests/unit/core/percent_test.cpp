// The one percent-decoder: each option as its callers use it (query strings reject a
// malformed '%' and read '+' as a space; paths keep both as they are).
#include "ratelimitd/core/percent.hpp"

#include <gtest/gtest.h>

namespace ratelimitd {
namespace {

constexpr PercentOptions form{.plus_is_space = true, .malformed = MalformedPercent::reject};
constexpr PercentOptions path{.plus_is_space = false, .malformed = MalformedPercent::keep};

TEST(PercentDecode, DecodesEveryEscapeOnceInEitherCase) {
    EXPECT_EQ(percent_decode("a%2Fb%2fc"), "a/b/c");
    EXPECT_EQ(percent_decode("%2541"), "%41");  // a decoded '%' is not decoded again
    EXPECT_EQ(percent_decode("%00x"), std::string("\0x", 2));
    EXPECT_EQ(percent_decode("%FF"), std::string(1, '\xff'));
    EXPECT_EQ(percent_decode(""), "");
}

TEST(PercentDecode, PlusIsASpaceOnlyInForms) {
    EXPECT_EQ(percent_decode("a+b%2B", form), "a b+");
    EXPECT_EQ(percent_decode("a+b%2B", path), "a+b+");
    EXPECT_EQ(percent_decode("a+b"), "a+b");  // the default is not a form
}

TEST(PercentDecode, AMalformedEscapeRejectsTheTextOrStaysAPercentByte) {
    for (const char* bad : {"%", "%4", "a%4", "%G1", "%1G", "%-1", "%+1", "% 1", "100%"}) {
        SCOPED_TRACE(bad);
        EXPECT_FALSE(percent_decode(bad, form).has_value());
        EXPECT_FALSE(percent_decode(bad).has_value());
        EXPECT_EQ(percent_decode(bad, path), std::string(bad));  // kept byte for byte
    }
    EXPECT_EQ(percent_decode("%%41", path), "%A");  // the first '%' kept, the escape decoded
    EXPECT_EQ(percent_decode("%4%41", path), "%4A");
}

TEST(HexDigitValue, ReadsBothCasesAndNothingElse) {
    EXPECT_EQ(hex_digit_value('0'), 0);
    EXPECT_EQ(hex_digit_value('9'), 9);
    EXPECT_EQ(hex_digit_value('a'), 10);
    EXPECT_EQ(hex_digit_value('F'), 15);
    for (const char c : {'g', 'G', '/', ':', '@', '`', ' ', '-', '\0'}) EXPECT_EQ(hex_digit_value(c), -1) << c;
}

}  // namespace
}  // namespace ratelimitd
