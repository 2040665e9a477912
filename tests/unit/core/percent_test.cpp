// The one percent-decoder: each option as its callers use it (query strings reject a
// malformed '%' and read '+' as a space; paths keep both as they are). The one encoder: the
// caller says which bytes stay.
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

bool keeps_letters(unsigned char c) noexcept { return c >= 'a' && c <= 'z'; }
bool keeps_all_but_percent(unsigned char c) noexcept { return c != '%'; }

TEST(PercentEncode, EscapesWhatIsNotKeptAsUpperCaseHex) {
    EXPECT_EQ(percent_encode(std::string("ab:Z%\xff\x00", 7), &keeps_letters), "ab%3A%5A%25%FF%00");
    EXPECT_EQ(percent_encode("", &keeps_letters), "");
    EXPECT_EQ(percent_encode("50%", &keeps_all_but_percent), "50%25");
}

TEST(PercentEncode, AppendsToWhatIsThereAndDecodesBack) {
    std::string out = "rl:";
    percent_encode_into(out, "a b", &keeps_letters);
    EXPECT_EQ(out, "rl:a%20b");
    const std::string bytes("x\x00%{}\x7f\x80", 7);
    EXPECT_EQ(percent_decode(percent_encode(bytes, &keeps_letters)), bytes);
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
