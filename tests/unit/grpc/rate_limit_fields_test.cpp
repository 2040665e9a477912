// headers::set_rate_limit_headers: the transport-neutral header values both doors carry, in the
// order each transport asks for, with one Retry-After rule.
#include "ratelimitd/headers/rate_limit_fields.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace {

using ratelimitd::check::Verdict;
using ratelimitd::check::WindowState;
using ratelimitd::headers::RateLimitHeader;
namespace headers = ratelimitd::headers;

struct Lines final : headers::HeaderSink {
    std::vector<std::pair<std::string, std::string>> got;
    void set(std::string_view name, std::string_view value) override { got.emplace_back(name, value); }
};

WindowState window(bool allowed, std::int64_t remaining, std::int64_t retry_after_s) {
    WindowState w;
    w.policy = "api";
    w.allowed = allowed;
    w.limit = 10;
    w.window_s = 60;
    w.remaining = remaining;
    w.reset_epoch_s = 1764518478;
    w.reset_after_s = 18;
    w.retry_after_s = retry_after_s;
    return w;
}

TEST(RateLimitFields, RetryAfterIsAtLeastOneAndAtMostFifteenDigits) {
    EXPECT_EQ(headers::retry_after_of(window(false, 0, 0)), 1);
    EXPECT_EQ(headers::retry_after_of(window(false, 0, -5)), 1);
    EXPECT_EQ(headers::retry_after_of(window(false, 0, 18)), 18);
    EXPECT_EQ(headers::retry_after_of(window(false, 0, 9'000'000'000'000'000)), headers::max_shown_count);
    EXPECT_EQ(headers::shown_count(-1), 0);
    EXPECT_EQ(headers::shown_count(headers::max_shown_count + 1), headers::max_shown_count);
}

TEST(RateLimitFields, LinesComeInTheOrderAskedAndDenialLinesOnlyWhenDenied) {
    constexpr std::array order{RateLimitHeader::rate_limit, RateLimitHeader::retry_after, RateLimitHeader::x_limit,
                               RateLimitHeader::no_store, RateLimitHeader::lease};
    Lines denied;
    headers::set_rate_limit_headers(Verdict{false, {window(false, 0, 0)}}, order, denied);
    const std::vector<std::pair<std::string, std::string>> want{
        {"RateLimit", "\"api\";r=0;t=1"}, {"Retry-After", "1"}, {"X-RateLimit-Limit", "10"},
        {"Cache-Control", "no-store"}};
    EXPECT_EQ(denied.got, want) << "no lease line: the verdict holds none";

    Lines allowed;
    headers::set_rate_limit_headers(Verdict{true, {window(true, 4, 0)}}, order, allowed);
    const std::vector<std::pair<std::string, std::string>> want_allowed{
        {"RateLimit", "\"api\";r=4;t=18"}, {"X-RateLimit-Limit", "10"}};
    EXPECT_EQ(allowed.got, want_allowed);
}

TEST(RateLimitFields, NoWindowsNoLines) {
    constexpr std::array all{RateLimitHeader::x_limit, RateLimitHeader::policy, RateLimitHeader::retry_after};
    Lines none;
    headers::set_rate_limit_headers(Verdict{false, {}}, all, none);
    EXPECT_TRUE(none.got.empty());
}

TEST(RateLimitFields, EveryLineHasItsName) {
    EXPECT_EQ(headers::header_name(RateLimitHeader::x_limit), "X-RateLimit-Limit");
    EXPECT_EQ(headers::header_name(RateLimitHeader::x_remaining), "X-RateLimit-Remaining");
    EXPECT_EQ(headers::header_name(RateLimitHeader::x_reset), "X-RateLimit-Reset");
    EXPECT_EQ(headers::header_name(RateLimitHeader::policy), "RateLimit-Policy");
    EXPECT_EQ(headers::header_name(RateLimitHeader::rate_limit), "RateLimit");
    EXPECT_EQ(headers::header_name(RateLimitHeader::lease), "X-RateLimit-Lease");
    EXPECT_EQ(headers::header_name(RateLimitHeader::retry_after), "Retry-After");
    EXPECT_EQ(headers::header_name(RateLimitHeader::no_store), "Cache-Control");
}


// http_field_lines is the wire form of set_rate_limit_headers: the same lines, byte for byte.
std::string as_wire(const Lines& lines) {
    std::string out;
    for (const auto& [name, value] : lines.got) out += name + ": " + value + "\r\n";
    return out;
}

TEST(RateLimitFields, WireLinesAreTheSinkLinesByteForByte) {
    constexpr std::array all{RateLimitHeader::x_limit,    RateLimitHeader::x_remaining, RateLimitHeader::x_reset,
                             RateLimitHeader::policy,     RateLimitHeader::rate_limit,  RateLimitHeader::lease,
                             RateLimitHeader::retry_after, RateLimitHeader::no_store};
    WindowState odd = window(true, headers::max_shown_count + 7, 0);
    odd.policy = std::string("q\"\\\x01\xff", 5) + std::string(300, 'n');  // escapes, and long
    odd.limit = -3;
    WindowState leased = window(true, 2, 0);
    leased.lease = std::string(120, 'L');
    const std::vector<Verdict> verdicts{
        Verdict{true, {window(true, 4, 0)}},
        Verdict{false, {window(true, 3, 0), window(false, 0, 9), odd}},
        Verdict{true, {leased, odd, window(true, 1, 0)}},
        Verdict{false, {window(false, 0, -5)}},
    };
    for (const Verdict& v : verdicts) {
        Lines lines;
        headers::set_rate_limit_headers(v, all, lines);
        EXPECT_EQ(headers::http_field_lines(v, all), as_wire(lines));
    }
    EXPECT_EQ(headers::http_field_lines(Verdict{true, {window(true, 4, 0)}}, all),
              "X-RateLimit-Limit: 10\r\nX-RateLimit-Remaining: 4\r\nX-RateLimit-Reset: 1764518478\r\n"
              "RateLimit-Policy: \"api\";q=10;w=60\r\nRateLimit: \"api\";r=4;t=18\r\n");
    EXPECT_EQ(headers::http_field_lines(Verdict{false, {}}, all), "");
}

}  // namespace
