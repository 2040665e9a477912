// GET /v1/audit's query: since as RFC 3339 or epoch seconds, limit bounded, anything else
// refused naming the parameter.
#include "ratelimitd/http/audit_endpoint.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::http {
namespace {

constexpr std::int64_t t0 = 1'796'217'605'000;  // 2026-12-02T13:20:05Z

TEST(AuditQuery, SinceTakesRfc3339InAnyOffsetAndEpochSeconds) {
    EXPECT_EQ(parse_audit_since("2026-12-02T13:20:05Z").value(), t0);
    EXPECT_EQ(parse_audit_since("2026-12-02t13:20:05z").value(), t0);
    EXPECT_EQ(parse_audit_since("2026-12-02T13:20:05.25Z").value(), t0 + 250);
    EXPECT_EQ(parse_audit_since("2026-12-02T15:20:05+02:00").value(), t0);
    EXPECT_EQ(parse_audit_since("2026-12-02T12:50:05-00:30").value(), t0);
    EXPECT_EQ(parse_audit_since("1796217605").value(), t0);
    EXPECT_EQ(parse_audit_since("1796217605.5").value(), t0 + 500);
    EXPECT_EQ(parse_audit_since("0").value(), 0);
}

TEST(AuditQuery, ABadSinceIsRefusedNamingIt) {
    for (const char* bad : {"", "yesterday", "2026-13-02T13:20:05Z", "2026-02-30T13:20:05Z", "2026-12-02T13:20:05",
                            "2026-12-02 13:20:05Z", "-5", "1796217605.1234", "12e3", "2026-12-02T13:20:05+2:00"}) {
        SCOPED_TRACE(bad);
        const auto r = parse_audit_since(bad);
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, errc::invalid_request);
        EXPECT_EQ(r.error().detail.rfind("since: ", 0), 0u) << r.error().detail;
    }
}

TEST(AuditQuery, LimitIsBoundedAndOtherParametersAreRefused) {
    auto q = parse_audit_query("since=2026-12-02T13%3A20%3A05Z&limit=1000");
    ASSERT_TRUE(q.has_value()) << q.error().detail;
    EXPECT_EQ(q->since_epoch_ms, t0);
    EXPECT_EQ(q->limit, audit_max_limit);
    auto all = parse_audit_query("");
    ASSERT_TRUE(all.has_value());
    EXPECT_EQ(all->since_epoch_ms, -1);
    EXPECT_EQ(all->limit, audit_default_limit);
    for (const char* bad : {"limit=0", "limit=1001", "limit=x", "limit=-1"}) {
        auto r = parse_audit_query(bad);
        ASSERT_FALSE(r.has_value()) << bad;
        EXPECT_EQ(r.error().detail.rfind("limit: ", 0), 0u) << r.error().detail;
    }
    auto twice = parse_audit_query("since=0&since=1");
    ASSERT_FALSE(twice.has_value());
    EXPECT_EQ(twice.error().detail, "since: given more than once");
    auto other = parse_audit_query("tenant=x");
    ASSERT_FALSE(other.has_value());
    EXPECT_EQ(other.error().detail, "query: \"tenant\" is not a parameter of /v1/audit (since, limit)");
}

}  // namespace
}  // namespace ratelimitd::http
