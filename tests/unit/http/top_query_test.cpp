// GET /v1/top's parameters: defaults, bounds, and a clear error naming the bad one.
#include "ratelimitd/http/top_endpoint.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::http {
namespace {

TEST(TopQuery, DefaultsToDeniedTenOfEveryPolicy) {
    auto q = parse_top_query("", 20);
    ASSERT_TRUE(q);
    EXPECT_FALSE(q->policy);
    EXPECT_EQ(q->by, service::TopBy::denied);
    EXPECT_EQ(q->n, 10u);
}

TEST(TopQuery, ReadsEveryParameter) {
    auto q = parse_top_query("policy=api%2Dv2&by=admitted&n=20", 20);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->policy, "api-v2");
    EXPECT_EQ(q->by, service::TopBy::admitted);
    EXPECT_EQ(q->n, 20u);
}

TEST(TopQuery, ReadsTheRlqsParameters) {
    auto q = parse_top_query("rlqs=web&rule=api%20keys&by=demand&n=3", 20);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->rlqs, "web");
    EXPECT_EQ(q->rule, "api keys");
    EXPECT_TRUE(q->demand);
    EXPECT_EQ(q->n, 3u);
    q = parse_top_query("rlqs=web", 20);
    ASSERT_TRUE(q);
    EXPECT_FALSE(q->demand);  // denied, the default
    EXPECT_EQ(q->by, service::TopBy::denied);
}

TEST(TopQuery, RefusesBadParametersNamingThem) {
    const std::pair<const char*, const char*> cases[] = {
        {"n=0", "n:"},         {"n=21", "n:"},       {"n=x", "n:"},      {"n=5x", "n:"},
        {"n=", "n:"},          {"by=allowed", "by:"}, {"policy=", "policy:"}, {"n=1&n=2", "n:"},
        {"tenant=a", "query:"}, {"policy=%zz", "query:"},
        // Buckets of rlqs: or tenants of policies, not both; demand ranks buckets only.
        {"rlqs=web&policy=api", "rlqs:"}, {"rule=api", "rule:"}, {"by=demand", "by:"},
        {"rlqs=web&by=admitted", "by:"},  {"rlqs=", "rlqs:"},    {"rlqs=web&rule=", "rule:"},
    };
    for (const auto& [query, named] : cases) {
        auto q = parse_top_query(query, 20);
        ASSERT_FALSE(q) << query;
        EXPECT_EQ(q.error().code, errc::invalid_request) << query;
        EXPECT_EQ(q.error().detail.rfind(named, 0), 0u) << query << ": " << q.error().detail;
    }
}

}  // namespace
}  // namespace ratelimitd::http
