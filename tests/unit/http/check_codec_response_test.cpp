// The status table and the exact JSON answers: error responses and check responses.
#include "ratelimitd/http/check_codec.hpp"
#include "unit/http/support/window_state.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace {

using ratelimitd::errc;
using ratelimitd::Problem;
using ratelimitd::check::Verdict;
using ratelimitd::http::make_check_response;
using ratelimitd::http::make_error_response;
using ratelimitd::http::Response;
using ratelimitd::http::status_for;
using ratelimitd::service::Decision;
namespace bhttp = boost::beast::http;

std::string header(const Response& res, std::string_view name) {
    auto it = res.find(name);
    return it == res.end() ? std::string("<absent>") : std::string(it->value());
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
