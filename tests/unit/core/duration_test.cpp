// parse_duration / format_duration: the duration spellings of config files.
#include "ratelimitd/core/duration.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace std::chrono_literals;
using ratelimitd::errc;
using ratelimitd::format_duration;
using ratelimitd::parse_duration;

std::string detail_of(std::string_view text) {
    const auto r = parse_duration(text);
    EXPECT_FALSE(r.has_value()) << text;
    return r.has_value() ? std::string{} : r.error().detail;
}

TEST(ParseDuration, AcceptsEveryUnit) {
    EXPECT_EQ(*parse_duration("500ms"), 500ms);
    EXPECT_EQ(*parse_duration("60s"), 60s);
    EXPECT_EQ(*parse_duration("1m"), 1min);
    EXPECT_EQ(*parse_duration("2h"), 2h);
    EXPECT_EQ(*parse_duration("1d"), 24h);
    EXPECT_EQ(*parse_duration("1ms"), 1ms);
    EXPECT_EQ(*parse_duration("007s"), 7s);
}

TEST(ParseDuration, NamesWhatWasExpectedWhenTheUnitIsMissing) {
    const auto r = parse_duration("60");
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::invalid_request);
    EXPECT_EQ(r.error().detail, R"(expected a duration such as "500ms", "60s" or "1m", got "60")");
}

TEST(ParseDuration, RejectsMalformedText) {
    for (const char* bad : {"", "s", "ms", " 60s", "60s ", "60 s", "60S", "60sec", "-5s", "+5s",
                            "1.5s", "1m30s", "0x10s", "60us"}) {
        EXPECT_FALSE(parse_duration(bad).has_value()) << '"' << bad << '"';
    }
}

TEST(ParseDuration, RejectsZero) {
    EXPECT_EQ(
        detail_of("0s"),
        R"(expected a duration such as "500ms", "60s" or "1m", got "0s" (must be at least 1ms))");
    EXPECT_FALSE(parse_duration("0ms").has_value());
    EXPECT_FALSE(parse_duration("000d").has_value());
}

TEST(ParseDuration, RejectsOverflowInsteadOfWrapping) {
    EXPECT_EQ(*parse_duration("9223372036854775807ms"), std::chrono::milliseconds::max());
    EXPECT_EQ(
        detail_of("9223372036854775808ms"),
        R"(expected a duration such as "500ms", "60s" or "1m", got "9223372036854775808ms" (too large))");
    // int64 max ms is 106751991167.3 days.
    EXPECT_TRUE(parse_duration("106751991167d").has_value());
    EXPECT_FALSE(parse_duration("106751991168d").has_value());
    EXPECT_FALSE(parse_duration("99999999999999999999999999s").has_value());
}

TEST(ParseDuration, NeverEchoesRawControlBytes) {
    const std::string detail = detail_of(std::string("6\n0\x01s\"", 6));
    EXPECT_EQ(detail,
              R"(expected a duration such as "500ms", "60s" or "1m", got "6\x0a0\x01s\x22")");
}

TEST(ParseDuration, TruncatesLongInput) {
    const std::string detail = detail_of(std::string(1000, '9'));
    EXPECT_LT(detail.size(), 200u);
    EXPECT_NE(detail.find("...\""), std::string::npos);
}

TEST(FormatDuration, PicksTheShortestExactSpelling) {
    EXPECT_EQ(format_duration(60000ms), "1m");
    EXPECT_EQ(format_duration(1500ms), "1500ms");
    EXPECT_EQ(format_duration(90s), "90s");
    EXPECT_EQ(format_duration(1h), "1h");
    EXPECT_EQ(format_duration(25h), "25h");
    EXPECT_EQ(format_duration(48h), "2d");
    EXPECT_EQ(format_duration(1ms), "1ms");
    EXPECT_EQ(format_duration(0ms), "0ms");
}

TEST(FormatDuration, RoundTripsThroughParse) {
    for (const auto d :
         {1ms, 999ms, 1000ms, 61000ms, 3'600'000ms, 86'400'000ms, 31'536'000'000ms}) {
        const auto back = parse_duration(format_duration(d));
        ASSERT_TRUE(back.has_value()) << format_duration(d);
        EXPECT_EQ(*back, d);
    }
}

}  // namespace
