// Parsing of check bodies (parse_check_json): every field, every refusal with its exact detail.
// Query strings: check_codec_query_test.cpp; the answers: check_codec_response_test.cpp.
#include "ratelimitd/http/check_codec.hpp"
#include "unit/http/support/parse_problem.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>

namespace {

using ratelimitd::test::problem_of;
using ratelimitd::errc;
using ratelimitd::http::parse_check_json;

// ---------------------------------------------------------------------------------------
// parse_check_json

TEST(ParseCheckJson, ReadsEveryField) {
    auto r = parse_check_json(R"({"policy":"api-default","tenant":"tenant_8231","scope":"global",
                                  "cost":3,"method":"POST","path":"/v1/exports"})");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->policy, "api-default");
    EXPECT_EQ(r->tenant, "tenant_8231");
    EXPECT_EQ(r->scope, "global");
    EXPECT_EQ(r->cost, 3u);
    EXPECT_EQ(r->method, "POST");
    EXPECT_EQ(r->path, "/v1/exports");
}

TEST(ParseCheckJson, LeavesAbsentFieldsEmptyAndCostOne) {
    auto r = parse_check_json(R"({"tenant":"t1"})");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->tenant, "t1");
    EXPECT_FALSE(r->policy.has_value());
    EXPECT_FALSE(r->scope.has_value());
    EXPECT_FALSE(r->method.has_value());
    EXPECT_FALSE(r->path.has_value());
    EXPECT_EQ(r->cost, 1u);
}

TEST(ParseCheckJson, IgnoresUnknownFieldsAndNestedKeys) {
    auto r = parse_check_json(
        R"({"extra":{"tenant":5,"cost":"x"},"list":[{"tenant":1}],"tenant":"a","n":1.5})");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->tenant, "a");
}

TEST(ParseCheckJson, KeepsEmptyTenantForTheValidator) {
    auto r = parse_check_json(R"({"tenant":""})");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->tenant, "");
}

TEST(ParseCheckJson, AcceptsCostBounds) {
    EXPECT_EQ(parse_check_json(R"({"tenant":"t","cost":1})")->cost, 1u);
    EXPECT_EQ(parse_check_json(R"({"tenant":"t","cost":1000000})")->cost, 1000000u);
}

TEST(ParseCheckJson, RejectsTextThatIsNotJson) {
    for (std::string_view body : {"", "{", "tenant=a", R"({"tenant":"a",})", R"({"tenant":"a"} x)",
                                  R"({"tenant":'a'})", "{\"tenant\":\"\xff\"}"}) {
        auto p = problem_of(parse_check_json(body));
        EXPECT_EQ(p.code, errc::invalid_request) << body;
        EXPECT_TRUE(p.detail.starts_with("body: not valid JSON (")) << p.detail;
        EXPECT_TRUE(p.detail.ends_with(")")) << p.detail;
    }
}

TEST(ParseCheckJson, SaysWhereTheSyntaxErrorIs) {
    auto p = problem_of(parse_check_json("{\"tenant\": nul}"));
    EXPECT_EQ(p.detail.rfind("body: not valid JSON (line 1, column ", 0), 0u) << p.detail;
}

TEST(ParseCheckJson, SyntaxErrorOutranksAFieldError) {
    auto p = problem_of(parse_check_json(R"({"cost":"x","tenant":)"));
    EXPECT_EQ(p.code, errc::invalid_request);
    EXPECT_TRUE(p.detail.starts_with("body: not valid JSON")) << p.detail;
}

TEST(ParseCheckJson, RejectsJsonThatIsNotAnObject) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"[]", "body: expected a JSON object, got array"},
        {R"(["tenant","a"])", "body: expected a JSON object, got array"},
        {R"("tenant")", "body: expected a JSON object, got string"},
        {"42", "body: expected a JSON object, got number"},
        {"1.5", "body: expected a JSON object, got number"},
        {"true", "body: expected a JSON object, got boolean"},
        {"null", "body: expected a JSON object, got null"},
    };
    for (const auto& [body, detail] : cases) {
        auto p = problem_of(parse_check_json(body));
        EXPECT_EQ(p.code, errc::invalid_request) << body;
        EXPECT_EQ(p.detail, detail) << body;
    }
}

TEST(ParseCheckJson, RejectsWrongTypesForStringFields) {
    const std::pair<std::string_view, std::string_view> values[] = {
        {"5", "number"}, {"-5", "number"}, {"1.5", "number"}, {"true", "boolean"},
        {"null", "null"}, {"{}", "object"}, {"[\"a\"]", "array"},
    };
    for (std::string field : {"policy", "tenant", "scope", "method", "path"}) {
        for (const auto& [value, type] : values) {
            // For tenant itself the wrong value is the only tenant in the body.
            const std::string b = field == "tenant"
                                      ? R"({"tenant":)" + std::string(value) + "}"
                                      : R"({"tenant":"t",")" + field + "\":" +
                                            std::string(value) + "}";
            auto p = problem_of(parse_check_json(b));
            EXPECT_EQ(p.code, errc::invalid_request) << b;
            EXPECT_EQ(p.detail, field + ": expected a string, got " + std::string(type)) << b;
        }
    }
}

TEST(ParseCheckJson, RejectsCostOfWrongType) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {R"("3")", "cost: expected an integer, got string"},
        {"1.5", "cost: expected an integer, got \"1.5\""},
        {"1e3", "cost: expected an integer, got \"1e3\""},
        {"1.0", "cost: expected an integer, got \"1.0\""},
        {"true", "cost: expected an integer, got boolean"},
        {"null", "cost: expected an integer, got null"},
        {"[1]", "cost: expected an integer, got array"},
        {R"({"n":1})", "cost: expected an integer, got object"},
    };
    for (const auto& [value, detail] : cases) {
        const std::string body = R"({"tenant":"t","cost":)" + std::string(value) + "}";
        auto p = problem_of(parse_check_json(body));
        EXPECT_EQ(p.code, errc::invalid_request) << body;
        EXPECT_EQ(p.detail, detail) << body;
    }
}

TEST(ParseCheckJson, RejectsCostOutOfRange) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"0", "cost: must be 1..1000000, got 0"},
        {"-1", "cost: must be 1..1000000, got -1"},
        {"1000001", "cost: must be 1..1000000, got 1000001"},
        {"-9223372036854775808", "cost: must be 1..1000000, got -9223372036854775808"},
        {"18446744073709551615", "cost: must be 1..1000000, got 18446744073709551615"},
    };
    for (const auto& [value, detail] : cases) {
        const std::string body = R"({"tenant":"t","cost":)" + std::string(value) + "}";
        auto p = problem_of(parse_check_json(body));
        EXPECT_EQ(p.code, errc::invalid_cost) << body;
        EXPECT_EQ(p.detail, detail) << body;
    }
}

TEST(ParseCheckJson, RequiresTenant) {
    for (std::string_view body : {"{}", R"({"policy":"api-default","cost":1})"}) {
        auto p = problem_of(parse_check_json(body));
        EXPECT_EQ(p.code, errc::invalid_request);
        EXPECT_EQ(p.detail, "tenant: required");
    }
}

TEST(ParseCheckJson, FieldErrorOutranksMissingTenant) {
    auto p = problem_of(parse_check_json(R"({"cost":0})"));
    EXPECT_EQ(p.code, errc::invalid_cost);
}

TEST(ParseCheckJson, RejectsRepeatedFields) {
    auto p = problem_of(parse_check_json(R"({"tenant":"a","tenant":"b"})"));
    EXPECT_EQ(p.code, errc::invalid_request);
    EXPECT_EQ(p.detail, "tenant: given more than once");
    p = problem_of(parse_check_json(R"({"tenant":"a","cost":1,"cost":2})"));
    EXPECT_EQ(p.detail, "cost: given more than once");
}

TEST(ParseCheckJson, DecodesEscapes) {
    auto r = parse_check_json(R"({"tenant":"t\u005f1","scope":"a\/b"})");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->tenant, "t_1");
    EXPECT_EQ(r->scope, "a/b");
}

TEST(ParseCheckJson, SurvivesDeepNesting) {
    const std::string deep = "{\"x\":" + std::string(8000, '[') + std::string(8000, ']') +
                             ",\"tenant\":\"a\"}";
    auto r = parse_check_json(deep);
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->tenant, "a");
    EXPECT_FALSE(parse_check_json(std::string(16000, '[')).has_value());
}

TEST(ParseCheckJson, NeverThrowsOnMutatedInput) {
    const std::string seed =
        R"({"policy":"api-default","tenant":"t_1","scope":"global","cost":12,"x":[1,{"a":null}]})";
    std::mt19937 rng(12345);  // fixed seed: the same inputs on every run
    const std::string alphabet = "{}[]\",:0123456789.eE-+ntrufals\\/ \x01\xff\xc3";
    for (int i = 0; i < 5000; ++i) {
        std::string s = seed;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits && !s.empty(); ++e) {
            const std::size_t at = rng() % s.size();
            switch (rng() % 3) {
            case 0: s[at] = alphabet[rng() % alphabet.size()]; break;
            case 1: s.erase(at, 1); break;
            default: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
            }
        }
        EXPECT_NO_THROW({
            auto r = parse_check_json(s);
            if (!r) {
                EXPECT_FALSE(r.error().detail.empty());
            }
        }) << s;
    }
}

}  // namespace
