// The three byte escapes of keys and labels, pinned byte for byte over every byte value: the
// Redis keys they build must never change between versions (a changed key is a reset limit).
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace ratelimitd::policy;

/// Bytes 0x00..0xFF in order.
std::string every_byte() {
    std::string out;
    for (int c = 0; c < 256; ++c) out.push_back(static_cast<char>(c));
    return out;
}

TEST(EscapeKeyPart, KeepsLettersDigitsAndTenSymbolsAndEscapesTheRestInUpperCaseHex) {
    EXPECT_EQ(escape_key_part(every_byte()),
              "%00%01%02%03%04%05%06%07%08%09%0A%0B%0C%0D%0E%0F%10%11%12%13%14%15%16%17%18%19%1A%1B%1C%"
              "1D%1E%1F%20!%22%23%24%25%26%27%28%29*+,-%2E/0123456789%3A%3B%3C=%3E%3F@ABCDEFGHIJKLMNOPQ"
              "RSTUVWXYZ%5B%5C%5D%5E%5F%60abcdefghijklmnopqrstuvwxyz%7B%7C%7D~%7F%80%81%82%83%84%85%86%"
              "87%88%89%8A%8B%8C%8D%8E%8F%90%91%92%93%94%95%96%97%98%99%9A%9B%9C%9D%9E%9F%A0%A1%A2%A3%A"
              "4%A5%A6%A7%A8%A9%AA%AB%AC%AD%AE%AF%B0%B1%B2%B3%B4%B5%B6%B7%B8%B9%BA%BB%BC%BD%BE%BF%C0%C1"
              "%C2%C3%C4%C5%C6%C7%C8%C9%CA%CB%CC%CD%CE%CF%D0%D1%D2%D3%D4%D5%D6%D7%D8%D9%DA%DB%DC%DD%DE%"
              "DF%E0%E1%E2%E3%E4%E5%E6%E7%E8%E9%EA%EB%EC%ED%EE%EF%F0%F1%F2%F3%F4%F5%F6%F7%F8%F9%FA%FB%F"
              "C%FD%FE%FF");
    EXPECT_EQ(escape_key_part(""), "");
}

TEST(EscapeLabelPart, KeepsPrintableAsciiButQuoteBackslashAndPercent) {
    EXPECT_EQ(escape_label_part(every_byte()),
              "%00%01%02%03%04%05%06%07%08%09%0A%0B%0C%0D%0E%0F%10%11%12%13%14%15%16%17%18%19%1A%1B%1C%"
              "1D%1E%1F !%22#$%25&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[%5C]^_`abcdefghi"
              "jklmnopqrstuvwxyz{|}~%7F%80%81%82%83%84%85%86%87%88%89%8A%8B%8C%8D%8E%8F%90%91%92%93%94%"
              "95%96%97%98%99%9A%9B%9C%9D%9E%9F%A0%A1%A2%A3%A4%A5%A6%A7%A8%A9%AA%AB%AC%AD%AE%AF%B0%B1%B"
              "2%B3%B4%B5%B6%B7%B8%B9%BA%BB%BC%BD%BE%BF%C0%C1%C2%C3%C4%C5%C6%C7%C8%C9%CA%CB%CC%CD%CE%CF"
              "%D0%D1%D2%D3%D4%D5%D6%D7%D8%D9%DA%DB%DC%DD%DE%DF%E0%E1%E2%E3%E4%E5%E6%E7%E8%E9%EA%EB%EC%"
              "ED%EE%EF%F0%F1%F2%F3%F4%F5%F6%F7%F8%F9%FA%FB%FC%FD%FE%FF");
    EXPECT_EQ(escape_label_part(""), "");
}

TEST(MakeKey, TheScopeEscapesOnlyPercentAndBraces) {
    std::string expected = "rl:p:t:";
    for (const char c : every_byte()) {
        if (c == '%') expected += "%25";
        else if (c == '{') expected += "%7B";
        else if (c == '}') expected += "%7D";
        else expected += c;
    }
    EXPECT_EQ(make_key("rl", "p", "t", every_byte()), expected);
    EXPECT_EQ(make_window_key("rl", "p", "t", "%{}", "1s"), "rl:p:{t:%25%7B%7D}:1s");
}

}  // namespace
