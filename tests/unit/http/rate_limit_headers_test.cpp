// Exact header strings rendered for allowed, denied, multi-window and out-of-range verdicts.
#include "ratelimitd/headers/rate_limit_fields.hpp"
#include "ratelimitd/http/answer.hpp"
#include "ratelimitd/http/rate_limit_headers.hpp"
#include "unit/http/support/window_state.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/fields.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using ratelimitd::check::Verdict;
using ratelimitd::check::WindowState;
using ratelimitd::headers::rate_limit_field;
using ratelimitd::headers::rate_limit_policy_field;
using ratelimitd::http::set_rate_limit_headers;
namespace bhttp = boost::beast::http;

using ratelimitd::test::window;

Verdict verdict(bool allowed, ratelimitd::check::WindowStates windows) {
    return Verdict{allowed, std::move(windows)};
}

// The value of a header, or "<absent>" so that a missing header shows in the failure text.
std::string header(const bhttp::fields& f, std::string_view name) {
    auto it = f.find(name);
    return it == f.end() ? std::string("<absent>") : std::string(it->value());
}

const Verdict allowed_one =
    verdict(true, {window("api-default", true, 60, 60, 59, 1764518461, 1, 0)});
const Verdict denied_one =
    verdict(false, {window("api-default", false, 60, 60, 0, 1764518478, 18, 18)});

TEST(RateLimitHeaders, AllowedOneWindow) {
    bhttp::fields f;
    set_rate_limit_headers(allowed_one, f);
    EXPECT_EQ(header(f, "X-RateLimit-Limit"), "60");
    EXPECT_EQ(header(f, "X-RateLimit-Remaining"), "59");
    EXPECT_EQ(header(f, "X-RateLimit-Reset"), "1764518461");
    EXPECT_EQ(header(f, "RateLimit-Policy"), "\"api-default\";q=60;w=60");
    EXPECT_EQ(header(f, "RateLimit"), "\"api-default\";r=59;t=1");
    EXPECT_EQ(header(f, "Retry-After"), "<absent>");
    EXPECT_EQ(header(f, "Cache-Control"), "<absent>");  // the codec adds it to every response
    EXPECT_EQ(std::distance(f.begin(), f.end()), 5);
}

TEST(RateLimitHeaders, DeniedOneWindowAddsRetryAfterEqualToT) {
    bhttp::fields f;
    set_rate_limit_headers(denied_one, f);
    EXPECT_EQ(header(f, "X-RateLimit-Limit"), "60");
    EXPECT_EQ(header(f, "X-RateLimit-Remaining"), "0");
    EXPECT_EQ(header(f, "X-RateLimit-Reset"), "1764518478");
    EXPECT_EQ(header(f, "RateLimit-Policy"), "\"api-default\";q=60;w=60");
    EXPECT_EQ(header(f, "RateLimit"), "\"api-default\";r=0;t=18");
    EXPECT_EQ(header(f, "Retry-After"), "18");
    EXPECT_EQ(header(f, "Cache-Control"), "no-store");
}

TEST(RateLimitHeaders, DeniedWindowUsesRetryAfterAsT) {
    // Token bucket, cost 5: the window resets fully in 60 s but 5 tokens are back in 3 s.
    const Verdict v = verdict(false, {window("upload", false, 100, 60, 2, 1764518521, 60, 3)});
    bhttp::fields f;
    set_rate_limit_headers(v, f);
    EXPECT_EQ(header(f, "RateLimit"), "\"upload\";r=2;t=3");
    EXPECT_EQ(header(f, "Retry-After"), "3");
}

TEST(RateLimitHeaders, DeniedRetryAfterIsAtLeastOne) {
    const Verdict v = verdict(false, {window("login", false, 5, 60, 0, 1764518461, 0, 0)});
    bhttp::fields f;
    set_rate_limit_headers(v, f);
    EXPECT_EQ(header(f, "Retry-After"), "1");
    EXPECT_EQ(header(f, "RateLimit"), "\"login\";r=0;t=1");
}

TEST(RateLimitHeaders, MultiWindowAllowedReportsLeastRemaining) {
    const Verdict v = verdict(true, {window("daily", true, 1000, 86400, 917, 1764558674, 40213, 0),
                                     window("burst", true, 100, 60, 42, 1764518478, 18, 0)});
    bhttp::fields f;
    set_rate_limit_headers(v, f);
    EXPECT_EQ(header(f, "X-RateLimit-Limit"), "100");
    EXPECT_EQ(header(f, "X-RateLimit-Remaining"), "42");
    EXPECT_EQ(header(f, "X-RateLimit-Reset"), "1764518478");
    EXPECT_EQ(header(f, "RateLimit-Policy"), "\"daily\";q=1000;w=86400, \"burst\";q=100;w=60");
    EXPECT_EQ(header(f, "RateLimit"), "\"daily\";r=917;t=40213, \"burst\";r=42;t=18");
    EXPECT_EQ(header(f, "Retry-After"), "<absent>");
    // One field line per name, as nginx's $upstream_http_* needs.
    EXPECT_EQ(f.count("RateLimit"), 1u);
    EXPECT_EQ(f.count("RateLimit-Policy"), 1u);
}

TEST(RateLimitHeaders, MultiWindowDeniedReportsTheDenyingWindow) {
    const Verdict v =
        verdict(false, {window("burst", true, 100, 60, 42, 1764518478, 18, 0),
                        window("daily", false, 1000, 86400, 0, 1764558674, 40213, 40213)});
    bhttp::fields f;
    set_rate_limit_headers(v, f);
    EXPECT_EQ(header(f, "X-RateLimit-Limit"), "1000");
    EXPECT_EQ(header(f, "X-RateLimit-Remaining"), "0");
    EXPECT_EQ(header(f, "X-RateLimit-Reset"), "1764558674");
    EXPECT_EQ(header(f, "RateLimit"), "\"burst\";r=42;t=18, \"daily\";r=0;t=40213");
    EXPECT_EQ(header(f, "Retry-After"), "40213");
    EXPECT_EQ(header(f, "Cache-Control"), "no-store");
}

TEST(RateLimitHeaders, ClampsToFifteenDigitsAndZero) {
    const Verdict v = verdict(false, {window("big", false, 1'000'000'000'000'000'000, 0, -5, -1,
                                             9'000'000'000'000'000'000,
                                             1'000'000'000'000'000)});
    bhttp::fields f;
    set_rate_limit_headers(v, f);
    EXPECT_EQ(header(f, "X-RateLimit-Limit"), "999999999999999");
    EXPECT_EQ(header(f, "X-RateLimit-Remaining"), "0");
    EXPECT_EQ(header(f, "X-RateLimit-Reset"), "0");
    // w must be >= 1 (draft -11 §3.1.3).
    EXPECT_EQ(header(f, "RateLimit-Policy"), "\"big\";q=999999999999999;w=1");
    EXPECT_EQ(header(f, "RateLimit"), "\"big\";r=0;t=999999999999999");
    EXPECT_EQ(header(f, "Retry-After"), "999999999999999");
}

TEST(RateLimitHeaders, AllowedTIsClampedToo) {
    const Verdict v = verdict(true, {window("p", true, 1, 1, 1, 1, -3, 0)});
    EXPECT_EQ(rate_limit_field(v), "\"p\";r=1;t=0");
}

TEST(RateLimitHeaders, EscapesQuoteAndBackslashInPolicyNames) {
    const Verdict v = verdict(true, {window("a\"b\\c", true, 10, 60, 9, 100, 5, 0)});
    EXPECT_EQ(rate_limit_policy_field(v), R"("a\"b\\c";q=10;w=60)");
    EXPECT_EQ(rate_limit_field(v), R"("a\"b\\c";r=9;t=5)");
}

TEST(RateLimitHeaders, ReplacesBytesAStringCannotHold) {
    // A raw CR/LF would split the header; non-ASCII is not allowed in an sf-string.
    const Verdict v = verdict(true, {window("a\r\nb\xc3\xa9", true, 10, 60, 9, 100, 5, 0)});
    EXPECT_EQ(rate_limit_policy_field(v), "\"a??b??\";q=10;w=60");
}

TEST(RateLimitHeaders, ReplacesExistingValues) {
    bhttp::fields f;
    f.insert("X-RateLimit-Limit", "1");
    f.insert("RateLimit", "\"old\";r=1;t=1");
    set_rate_limit_headers(allowed_one, f);
    EXPECT_EQ(f.count("X-RateLimit-Limit"), 1u);
    EXPECT_EQ(header(f, "X-RateLimit-Limit"), "60");
    EXPECT_EQ(f.count("RateLimit"), 1u);
    EXPECT_EQ(header(f, "RateLimit"), "\"api-default\";r=59;t=1");
}

TEST(RateLimitHeaders, NoWindowsSetsNothing) {
    bhttp::fields f;
    set_rate_limit_headers(verdict(false, {}), f);
    EXPECT_EQ(f.begin(), f.end());
    EXPECT_EQ(rate_limit_field(verdict(false, {})), "");
    EXPECT_EQ(rate_limit_policy_field(verdict(false, {})), "");
}

// The wire-text lines (their reported window's numbers formatted once, headers::ShownCounts)
// show what the field-by-field path sets, for every shape of verdict.
TEST(RateLimitHeaders, WireLinesShowWhatTheFieldPathSets) {
    const std::vector<Verdict> verdicts{
        allowed_one,
        denied_one,
        verdict(true, {window("daily", true, 1000, 86400, 917, 1764558674, 40213, 0),
                       window("burst", true, 100, 60, 42, 1764518478, 18, 0)}),
        verdict(false, {window("burst", true, 100, 60, 42, 1764518478, 18, 0),
                        window("daily", false, 1000, 86400, 0, 1764558674, 40213, 40213)}),
        verdict(false, {window("big", false, 1'000'000'000'000'000'000, 0, -5, -1, 9'000'000'000'000'000'000,
                               1'000'000'000'000'000)}),
        verdict(true, {window("p", true, 1, 1, 1, 1, -3, 0)}),
        // Admitted, its one window flagged denied (a shadow's): t is that window's Retry-After.
        verdict(true, {window("shadowed", false, 10, 60, 0, 1764518478, 50, 12)}),
    };
    for (const Verdict& v : verdicts) {
        ratelimitd::http::RenderedAnswer rendered(bhttp::status::ok, 11, true);
        set_rate_limit_headers(v, ratelimitd::headers::ShownCounts(v), rendered);
        const auto wire = ratelimitd::http::Answer(std::move(rendered)).to_response();
        bhttp::fields f;
        set_rate_limit_headers(v, f);
        for (const auto& field : f) {
            if (field.name_string() == "Cache-Control") continue;  // every rendered answer's own
            EXPECT_EQ(wire[field.name_string()], field.value()) << field.name_string();
        }
        EXPECT_EQ(wire.count("RateLimit"), 1u);
    }
}

TEST(RateLimitHeaders, FieldsAreDeterministicAcrossCalls) {
    EXPECT_EQ(rate_limit_field(denied_one), rate_limit_field(denied_one));
    EXPECT_EQ(rate_limit_policy_field(allowed_one), "\"api-default\";q=60;w=60");
}

}  // namespace
