// Go's value syntax as envoyproxy/ratelimit's variables are read.
#include "ratelimitd/erl/go_values.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::erl {
namespace {

using std::chrono::milliseconds;

TEST(GoValues, BooleansAreStrconvParseBool) {
    for (const char* yes : {"1", "t", "T", "TRUE", "true", "True"}) EXPECT_EQ(parse_go_bool(yes), true) << yes;
    for (const char* no : {"0", "f", "F", "FALSE", "false", "False"}) EXPECT_EQ(parse_go_bool(no), false) << no;
    for (const char* bad : {"", "yes", "on", "tRUE", " true"}) EXPECT_FALSE(parse_go_bool(bad)) << bad;
}

TEST(GoValues, DurationsAreTimeParseDuration) {
    EXPECT_EQ(parse_go_duration("0"), milliseconds{0});
    EXPECT_EQ(parse_go_duration("300ms"), milliseconds{300});
    EXPECT_EQ(parse_go_duration("24h"), milliseconds{86'400'000});
    EXPECT_EQ(parse_go_duration("1h30m"), milliseconds{5'400'000});
    EXPECT_EQ(parse_go_duration("1.5s"), milliseconds{1'500});
    EXPECT_EQ(parse_go_duration("1500us"), milliseconds{1});
    for (const char* bad : {"", "10", "1d", "-1s", "s", "1s2"}) EXPECT_FALSE(parse_go_duration(bad)) << bad;
}

TEST(GoValues, IntegersAndNumbers) {
    EXPECT_EQ(parse_go_int("8080"), 8080);
    EXPECT_EQ(parse_go_int("-1"), -1);
    EXPECT_FALSE(parse_go_int("80a"));
    EXPECT_FALSE(parse_go_int(""));
    EXPECT_EQ(parse_go_number("0.8"), 0.8);
    EXPECT_FALSE(parse_go_number("nan"));
}

}  // namespace
}  // namespace ratelimitd::erl
