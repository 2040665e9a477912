// nginx log formats: combined, a custom log_format with a tenant header, and what is refused.
#include "ratelimitd/simulate/nginx_format.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ratelimitd::simulate {
namespace {

TEST(NginxFormat, CombinedGivesClientTimeMethodAndUri) {
    NginxFormat combined(nginx_combined);
    LogRequest r;
    const std::string line = R"(203.0.113.9 - alice [01/Dec/2025:13:00:00 +0100] "POST /login?next=%2F HTTP/1.1" 429 )"
                             R"L(17 "https://example.test/a \x22quoted\x22" "curl/8.0 (x)")L";
    ASSERT_EQ(combined.parse(line, r), nullptr);
    EXPECT_EQ(r.client, "203.0.113.9");
    EXPECT_EQ(r.time_ms, 1'764'590'400'000);
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.uri, "/login?next=%2F");
    // combined logs two request headers, which an identity source may name.
    ASSERT_EQ(r.headers.size(), 2u);
    EXPECT_EQ(r.headers[0].name, "referer");
    EXPECT_EQ(r.headers[0].value, R"(https://example.test/a \x22quoted\x22)");
    EXPECT_EQ(r.headers[1].name, "user-agent");
    EXPECT_EQ(r.headers[1].value, "curl/8.0 (x)");
    // IPv6 clients and HTTP/0.9 request lines (no protocol); "-" is an absent header.
    ASSERT_EQ(combined.parse(R"(2001:db8::1 - - [01/Dec/2025:12:00:00 +0000] "GET /x" 200 1 "-" "-")", r), nullptr);
    EXPECT_EQ(r.client, "2001:db8::1");
    EXPECT_EQ(r.uri, "/x");
    EXPECT_TRUE(r.headers.empty());
}

TEST(NginxFormat, GarbageIsRefusedWithAReason) {
    NginxFormat combined(nginx_combined);
    LogRequest r;
    for (const char* bad : {"", "garbage", R"(1.2.3.4 - - [01/Dec/2025:12:00:00 +0000] "\x16\x03" 400 0 "-" "-")",
                            R"(1.2.3.4 - - [01/Dec/2025:12:00:00 +0000] "GET http://x/ HTTP/1.1" 400 0 "-" "-")",
                            R"(1.2.3.4 - - [01/Xyz/2025:12:00:00 +0000] "GET / HTTP/1.1" 200 0 "-" "-")",
                            R"(- - - [01/Dec/2025:12:00:00 +0000] "GET / HTTP/1.1" 200 0 "-" "-")"}) {
        EXPECT_NE(combined.parse(bad, r), nullptr) << bad;
    }
}

TEST(NginxFormat, ACustomFormatReadsHeadersAndIsoTimes) {
    NginxFormat f(R"($time_iso8601 ${remote_addr} $request_method $uri?$args tenant=$http_x_tenant_id rt=$request_time)");
    LogRequest r;
    ASSERT_EQ(f.parse("2025-12-01T12:00:00+00:00 192.0.2.4 GET /v1/items?page=2 tenant=acme rt=0.003", r), nullptr);
    EXPECT_EQ(r.client, "192.0.2.4");
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.uri, "/v1/items?page=2");
    ASSERT_EQ(r.headers.size(), 1u);
    EXPECT_EQ(r.headers[0].name, "x-tenant-id");
    EXPECT_EQ(r.headers[0].value, "acme");
    // A header nginx logged as "-" was absent.
    ASSERT_EQ(f.parse("2025-12-01T12:00:00+00:00 192.0.2.4 GET /v1/items? tenant=- rt=0.003", r), nullptr);
    EXPECT_TRUE(r.headers.empty());
}

TEST(NginxFormat, FormatsThatCannotBeReadAreRefusedByName) {
    const auto message = [](const char* format) {
        try {
            NginxFormat f(format);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    EXPECT_NE(message("$time_local \"$request\"").find("$remote_addr"), std::string::npos);
    EXPECT_NE(message("$remote_addr \"$request\"").find("$time_local"), std::string::npos);
    EXPECT_NE(message("$remote_addr [$time_local] $status").find("$request"), std::string::npos);
    EXPECT_NE(message("$remote_addr$remote_user [$time_local] \"$request\"").find("no text between"), std::string::npos);
    EXPECT_NE(message("$binary_remote_addr [$time_local] \"$request\"").find("not text"), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::simulate
