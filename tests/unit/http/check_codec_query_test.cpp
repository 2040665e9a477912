// Parsing of check query strings (parse_check_query): decoding, defaults, every refusal with its
// exact detail.
#include "ratelimitd/http/check_codec.hpp"
#include "unit/http/support/parse_problem.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace {

using ratelimitd::test::problem_of;
using ratelimitd::errc;
using ratelimitd::http::parse_check_query;

// ---------------------------------------------------------------------------------------
// parse_check_query

TEST(ParseCheckQuery, ReadsEveryFieldAndDecodes) {
    auto r = parse_check_query(
        "policy=api-default&tenant=t%5F1&scope=POST_%2Fv1%2fexports&cost=3&method=GET&path=%2Fa+b");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->policy, "api-default");
    EXPECT_EQ(r->tenant, "t_1");
    EXPECT_EQ(r->scope, "POST_/v1/exports");
    EXPECT_EQ(r->cost, 3u);
    EXPECT_EQ(r->method, "GET");
    EXPECT_EQ(r->path, "/a b");
}

TEST(ParseCheckQuery, DefaultsLikeJson) {
    auto r = parse_check_query("tenant=a");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_FALSE(r->policy.has_value());
    EXPECT_FALSE(r->scope.has_value());
    EXPECT_EQ(r->cost, 1u);
}

TEST(ParseCheckQuery, PlusIsASpaceAndEncodedPlusIsAPlus) {
    auto r = parse_check_query("tenant=a&scope=x+y%2Bz");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->scope, "x y+z");
}

TEST(ParseCheckQuery, EncodedSeparatorsStayInTheValue) {
    auto r = parse_check_query("tenant=a%26cost%3D5");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->tenant, "a&cost=5");
    EXPECT_EQ(r->cost, 1u);
}

TEST(ParseCheckQuery, DecodesNamesToo) {
    auto r = parse_check_query("ten%61nt=a");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->tenant, "a");
}

TEST(ParseCheckQuery, EmptyValueCountsAsGiven) {
    for (std::string_view q : {"tenant=", "tenant", "tenant=&scope="}) {
        auto r = parse_check_query(q);
        ASSERT_TRUE(r.has_value()) << q << ": " << r.error().detail;
        EXPECT_EQ(r->tenant, "") << q;
    }
    auto r = parse_check_query("tenant=a&scope=");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->scope, "");  // given but empty: the validator rejects it, not a default
}

TEST(ParseCheckQuery, SkipsEmptyItemsAndUnknownParameters) {
    auto r = parse_check_query("&&x=1&tenant=a&&y=%zz&z&");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->tenant, "a");
}

TEST(ParseCheckQuery, RequiresTenant) {
    for (std::string_view q : {"", "policy=api-default", "Tenant=a"}) {
        auto p = problem_of(parse_check_query(q));
        EXPECT_EQ(p.code, errc::invalid_request) << q;
        EXPECT_EQ(p.detail, "tenant: required") << q;
    }
}

TEST(ParseCheckQuery, RejectsMalformedPercentEncodingNamingTheField) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"tenant=%zz", "tenant"}, {"tenant=a%4", "tenant"},   {"tenant=a%", "tenant"},
        {"tenant=a&scope=%g1", "scope"}, {"tenant=a&policy=%%41", "policy"},
        {"tenant=a&cost=%3", "cost"},
    };
    for (const auto& [q, field] : cases) {
        auto p = problem_of(parse_check_query(q));
        EXPECT_EQ(p.code, errc::invalid_request) << q;
        EXPECT_EQ(p.detail, std::string(field) +
                                ": malformed percent-encoding (expected %XY with hex digits)")
            << q;
    }
}

TEST(ParseCheckQuery, RejectsMalformedPercentEncodingInAName) {
    auto p = problem_of(parse_check_query("tenant=a&ten%ant=b"));
    EXPECT_EQ(p.code, errc::invalid_request);
    EXPECT_EQ(p.detail, "query: malformed percent-encoding in parameter name \"ten%ant\"");
}

TEST(ParseCheckQuery, RejectsRepeatedFields) {
    for (std::string_view q : {"tenant=a&tenant=b", "tenant=a&tenant=a", "tenant=a&ten%61nt=b",
                               "tenant&tenant=a"}) {
        auto p = problem_of(parse_check_query(q));
        EXPECT_EQ(p.code, errc::invalid_request) << q;
        EXPECT_EQ(p.detail, "tenant: given more than once") << q;
    }
    auto p = problem_of(parse_check_query("tenant=a&cost=1&cost=1"));
    EXPECT_EQ(p.detail, "cost: given more than once");
}

TEST(ParseCheckQuery, ReadsCostDigits) {
    EXPECT_EQ(parse_check_query("tenant=a&cost=1")->cost, 1u);
    EXPECT_EQ(parse_check_query("tenant=a&cost=1000000")->cost, 1000000u);
    EXPECT_EQ(parse_check_query("tenant=a&cost=0001000000")->cost, 1000000u);
}

TEST(ParseCheckQuery, RejectsCostThatIsNotAnInteger) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"cost=abc", "cost: expected an integer, got \"abc\""},
        {"cost=1.5", "cost: expected an integer, got \"1.5\""},
        {"cost=1e3", "cost: expected an integer, got \"1e3\""},
        {"cost=3x", "cost: expected an integer, got \"3x\""},
        {"cost=+3", "cost: expected an integer, got \" 3\""},
        {"cost=%2B3", "cost: expected an integer, got \"+3\""},
        {"cost=-", "cost: expected an integer, got \"-\""},
        {"cost=", "cost: expected an integer, got an empty value"},
        {"cost", "cost: expected an integer, got an empty value"},
        {"cost=%0A1", "cost: expected an integer, got \"?1\""},
    };
    for (const auto& [q, detail] : cases) {
        auto p = problem_of(parse_check_query("tenant=a&" + std::string(q)));
        EXPECT_EQ(p.code, errc::invalid_request) << q;
        EXPECT_EQ(p.detail, detail) << q;
    }
}

TEST(ParseCheckQuery, RejectsCostOutOfRange) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"cost=0", "cost: must be 1..1000000, got 0"},
        {"cost=1000001", "cost: must be 1..1000000, got \"1000001\""},
        {"cost=-1", "cost: must be 1..1000000, got \"-1\""},
        {"cost=99999999999999999999999999",
         "cost: must be 1..1000000, got \"99999999999999999999999999\""},
    };
    for (const auto& [q, detail] : cases) {
        auto p = problem_of(parse_check_query("tenant=a&" + std::string(q)));
        EXPECT_EQ(p.code, errc::invalid_cost) << q;
        EXPECT_EQ(p.detail, detail) << q;
    }
}

TEST(ParseCheckQuery, PassesRawBytesToTheValidator) {
    auto r = parse_check_query("tenant=a%00b%FF");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->tenant, std::string("a\0b\xff", 4));
}

}  // namespace
