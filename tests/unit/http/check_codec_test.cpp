// Parsing of check bodies and query strings, the status table, and the exact JSON answers.
#include "ratelimitd/http/check_codec.hpp"
#include "unit/http/support/window_state.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

using ratelimitd::errc;
using ratelimitd::Problem;
using ratelimitd::check::CheckRequest;
using ratelimitd::check::Verdict;
using ratelimitd::check::WindowState;
using ratelimitd::http::make_check_response;
using ratelimitd::http::make_error_response;
using ratelimitd::http::parse_check_json;
using ratelimitd::http::parse_check_query;
using ratelimitd::http::Response;
using ratelimitd::http::status_for;
using ratelimitd::service::Decision;
namespace bhttp = boost::beast::http;

// The Problem of a failed parse; a parse that succeeded shows as a failure here.
template <class R>
Problem problem_of(const R& r) {
    if (r.has_value()) return Problem{errc::bad_script_reply, "<parse succeeded>"};
    return r.error();
}

std::string header(const Response& res, std::string_view name) {
    auto it = res.find(name);
    return it == res.end() ? std::string("<absent>") : std::string(it->value());
}

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

// ---------------------------------------------------------------------------------------
// status_for and error responses

TEST(StatusFor, MapsClientErrorsAndTreatsTheRestAsBugs) {
    EXPECT_EQ(status_for(errc::invalid_request), bhttp::status::bad_request);
    EXPECT_EQ(status_for(errc::unknown_policy), bhttp::status::bad_request);
    EXPECT_EQ(status_for(errc::invalid_cost), bhttp::status::bad_request);
    EXPECT_EQ(status_for(errc::payload_too_large), bhttp::status::payload_too_large);
    EXPECT_EQ(status_for(errc::not_found), bhttp::status::not_found);
    EXPECT_EQ(status_for(errc::method_not_allowed), bhttp::status::method_not_allowed);
    EXPECT_EQ(status_for(errc::store_unavailable), bhttp::status::internal_server_error);
    EXPECT_EQ(status_for(errc::store_timeout), bhttp::status::internal_server_error);
    EXPECT_EQ(status_for(errc::bad_script_reply), bhttp::status::internal_server_error);
    EXPECT_EQ(status_for(errc::too_many_connections), bhttp::status::service_unavailable);
    EXPECT_EQ(status_for(static_cast<errc>(0)), bhttp::status::internal_server_error);
    EXPECT_EQ(status_for(static_cast<errc>(99)), bhttp::status::internal_server_error);
}

TEST(MakeErrorResponse, RendersCodeAndDetail) {
    const Response res = make_error_response(Problem{errc::invalid_request, "tenant: required"}, 11,
                                             true);
    EXPECT_EQ(res.result(), bhttp::status::bad_request);
    EXPECT_EQ(res.version(), 11u);
    EXPECT_TRUE(res.keep_alive());
    EXPECT_EQ(header(res, "Content-Type"), "application/json");
    EXPECT_EQ(header(res, "Cache-Control"), "no-store");
    EXPECT_EQ(res.body(), R"({"error":"invalid_request","detail":"tenant: required"})");
    EXPECT_EQ(header(res, "Content-Length"), std::to_string(res.body().size()));
}

TEST(MakeErrorResponse, UsesTheStatusTable) {
    EXPECT_EQ(make_error_response({errc::payload_too_large, "body: over 16384 bytes"}, 11, false)
                  .result(),
              bhttp::status::payload_too_large);
    EXPECT_EQ(make_error_response({errc::unknown_policy, "policy: \"x\" is not defined"}, 11, true)
                  .body(),
              R"({"error":"unknown_policy","detail":"policy: \"x\" is not defined"})");
}

TEST(MakeErrorResponse, HonoursKeepAliveAndVersion) {
    const Response closing = make_error_response({errc::not_found, "path: /x"}, 11, false);
    EXPECT_FALSE(closing.keep_alive());
    EXPECT_EQ(header(closing, "Connection"), "close");
    const Response http10 = make_error_response({errc::not_found, "path: /x"}, 10, true);
    EXPECT_EQ(http10.version(), 10u);
    EXPECT_TRUE(http10.keep_alive());
}

TEST(MakeErrorResponse, EscapesAndSurvivesInvalidUtf8) {
    const Response res =
        make_error_response({errc::invalid_request, "tenant: \"a\\b\"\n\xff"}, 11, true);
    EXPECT_EQ(res.body(),
              "{\"error\":\"invalid_request\",\"detail\":"
              "\"tenant: \\\"a\\\\b\\\"\\n\xEF\xBF\xBD\"}");
}

// ---------------------------------------------------------------------------------------
// make_check_response

using ratelimitd::test::window;

Decision decision(std::string policy, bool allowed, ratelimitd::check::WindowStates windows) {
    Decision d;
    d.policy = std::move(policy);
    d.tenant = "tenant_8231";
    d.scope = "global";
    d.verdict = Verdict{allowed, std::move(windows)};
    return d;
}

void expect_json_headers(const Response& res) {
    EXPECT_EQ(header(res, "Content-Type"), "application/json");
    EXPECT_EQ(header(res, "Cache-Control"), "no-store");
    EXPECT_EQ(header(res, "Content-Length"), std::to_string(res.body().size()));
}

TEST(MakeCheckResponse, AllowedIs200WithBodyAndHeaders) {
    const auto d = decision("api-default", true,
                            {window("api-default", true, 60, 60, 59, 1764518461, 1, 0)});
    const Response res = make_check_response(d, 11, true);
    EXPECT_EQ(res.result(), bhttp::status::ok);
    EXPECT_TRUE(res.keep_alive());
    expect_json_headers(res);
    EXPECT_EQ(res.body(), R"({"allowed":true,"policy":"api-default","tenant":"tenant_8231",)"
                          R"("scope":"global","limit":60,"remaining":59,"reset":1764518461,)"
                          R"("retry_after":0})");
    EXPECT_EQ(header(res, "X-RateLimit-Limit"), "60");
    EXPECT_EQ(header(res, "X-RateLimit-Remaining"), "59");
    EXPECT_EQ(header(res, "X-RateLimit-Reset"), "1764518461");
    EXPECT_EQ(header(res, "RateLimit-Policy"), "\"api-default\";q=60;w=60");
    EXPECT_EQ(header(res, "RateLimit"), "\"api-default\";r=59;t=1");
    EXPECT_EQ(header(res, "Retry-After"), "<absent>");
    EXPECT_EQ(header(res, "X-RateLimit-Degraded"), "<absent>");
}

TEST(MakeCheckResponse, DeniedIs429WithRetryAfter) {
    const auto d = decision("api-default", false,
                            {window("api-default", false, 60, 60, 0, 1764518478, 18, 18)});
    const Response res = make_check_response(d, 11, false);
    EXPECT_EQ(res.result(), bhttp::status::too_many_requests);
    EXPECT_FALSE(res.keep_alive());
    expect_json_headers(res);
    EXPECT_EQ(res.body(), R"({"allowed":false,"policy":"api-default","tenant":"tenant_8231",)"
                          R"("scope":"global","limit":60,"remaining":0,"reset":1764518478,)"
                          R"("retry_after":18})");
    EXPECT_EQ(header(res, "Retry-After"), "18");
    EXPECT_EQ(header(res, "RateLimit"), "\"api-default\";r=0;t=18");
    EXPECT_EQ(header(res, "X-RateLimit-Remaining"), "0");
}

TEST(MakeCheckResponse, DeniedRetryAfterInBodyIsAtLeastOne) {
    const auto d = decision("login", false, {window("login", false, 5, 60, 0, 1764518461, 0, 0)});
    const Response res = make_check_response(d, 11, true);
    EXPECT_EQ(header(res, "Retry-After"), "1");
    EXPECT_NE(res.body().find(R"("retry_after":1})"), std::string::npos) << res.body();
}

TEST(MakeCheckResponse, SeveralWindowsAreListed) {
    const auto d = decision("burst-daily", false,
                            {window("burst", true, 100, 60, 42, 1764518478, 18, 0),
                             window("daily", false, 1000, 86400, 0, 1764558674, 40213, 40213)});
    const Response res = make_check_response(d, 11, true);
    EXPECT_EQ(res.result(), bhttp::status::too_many_requests);
    EXPECT_EQ(res.body(),
              R"({"allowed":false,"policy":"burst-daily","tenant":"tenant_8231","scope":"global",)"
              R"("limit":1000,"remaining":0,"reset":1764558674,"retry_after":40213,"windows":[)"
              R"({"policy":"burst","limit":100,"window":60,"remaining":42,"reset":1764518478,)"
              R"("retry_after":0},)"
              R"({"policy":"daily","limit":1000,"window":86400,"remaining":0,"reset":1764558674,)"
              R"("retry_after":40213}]})");
    EXPECT_EQ(header(res, "RateLimit-Policy"), "\"burst\";q=100;w=60, \"daily\";q=1000;w=86400");
    EXPECT_EQ(header(res, "RateLimit"), "\"burst\";r=42;t=18, \"daily\";r=0;t=40213");
    EXPECT_EQ(header(res, "Retry-After"), "40213");
}

TEST(MakeCheckResponse, SeveralWindowsAllowedReportLeastRemaining) {
    const auto d = decision("burst-daily", true,
                            {window("daily", true, 1000, 86400, 917, 1764558674, 40213, 0),
                             window("burst", true, 100, 60, 42, 1764518478, 18, 0)});
    const Response res = make_check_response(d, 11, true);
    EXPECT_EQ(res.result(), bhttp::status::ok);
    EXPECT_TRUE(res.body().starts_with(
        R"({"allowed":true,"policy":"burst-daily","tenant":"tenant_8231","scope":"global",)"
        R"("limit":100,"remaining":42,"reset":1764518478,"retry_after":0,"windows":[)"))
        << res.body();
    EXPECT_EQ(header(res, "X-RateLimit-Limit"), "100");
}

TEST(MakeCheckResponse, PolicyNoneIs200WithoutLimitHeaders) {
    Decision d;
    d.policy = "none";
    d.tenant = "t1";
    d.scope = "GET_/health";
    d.limited = false;
    d.verdict.allowed = true;
    const Response res = make_check_response(d, 11, true);
    EXPECT_EQ(res.result(), bhttp::status::ok);
    expect_json_headers(res);
    EXPECT_EQ(res.body(),
              R"({"allowed":true,"policy":"none","tenant":"t1","scope":"GET_/health"})");
    for (std::string_view h : {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
                               "RateLimit", "RateLimit-Policy", "Retry-After"}) {
        EXPECT_EQ(header(res, h), "<absent>") << h;
    }
}

TEST(MakeCheckResponse, DegradedFailOpenIs200WithNulls) {
    auto d = decision("api-default", true, {});
    d.degraded = true;
    d.store_error = errc::store_unavailable;
    const Response res = make_check_response(d, 11, true);
    EXPECT_EQ(res.result(), bhttp::status::ok);
    expect_json_headers(res);
    EXPECT_EQ(res.body(), R"({"allowed":true,"policy":"api-default","tenant":"tenant_8231",)"
                          R"("scope":"global","limit":null,"remaining":null,"reset":null,)"
                          R"("retry_after":null,"degraded":true})");
    EXPECT_EQ(header(res, "X-RateLimit-Degraded"), "store_unavailable");
    EXPECT_EQ(header(res, "Retry-After"), "<absent>");
    EXPECT_EQ(header(res, "X-RateLimit-Limit"), "<absent>");
    EXPECT_EQ(header(res, "RateLimit"), "<absent>");
}

TEST(MakeCheckResponse, DegradedFailClosedIs503WithRetryAfterOne) {
    auto d = decision("login", false, {});
    d.degraded = true;
    d.store_error = errc::store_timeout;
    const Response res = make_check_response(d, 11, true);
    EXPECT_EQ(res.result(), bhttp::status::service_unavailable);
    expect_json_headers(res);
    EXPECT_EQ(res.body(), R"({"allowed":false,"policy":"login","tenant":"tenant_8231",)"
                          R"("scope":"global","limit":null,"remaining":null,"reset":null,)"
                          R"("retry_after":1,"degraded":true})");
    EXPECT_EQ(header(res, "X-RateLimit-Degraded"), "store_timeout");
    EXPECT_EQ(header(res, "Retry-After"), "1");
    EXPECT_EQ(header(res, "RateLimit"), "<absent>");
}

TEST(MakeCheckResponse, AFailClosedPolicySaysSoInEveryAnswer) {
    // A client that cannot reach ratelimitd later denies too (clients/php/README.md).
    auto allowed = decision("login", true, {window("login", true, 5, 60, 4, 1764518461, 1, 0)});
    auto denied = decision("login", false, {window("login", false, 5, 60, 0, 1764518461, 9, 9)});
    auto degraded = decision("login", false, {});
    degraded.degraded = true;
    for (Decision* d : {&allowed, &denied, &degraded}) {
        d->fail_closed = true;
        const std::string body(make_check_response(*d, 11, true).body());
        EXPECT_TRUE(body.ends_with(R"(,"on_store_error":"deny"})")) << body;
        d->fail_closed = false;
        EXPECT_EQ(make_check_response(*d, 11, true).body().find("on_store_error"), std::string::npos)
            << "a fail-open policy, the default, adds nothing";
    }
}

TEST(MakeCheckResponse, LimitedDecisionWithoutWindowsIsABug) {
    const Response res = make_check_response(decision("api-default", true, {}), 11, true);
    EXPECT_EQ(res.result(), bhttp::status::internal_server_error);
    EXPECT_EQ(res.body(),
              R"({"error":"bad_script_reply","detail":"verdict: the store reported no window"})");
}

}  // namespace
