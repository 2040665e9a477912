// parse_envoy_state_query: the descriptor of /v1/envoy/peek and /v1/envoy/reset.
#include "ratelimitd/http/envoy_admin_endpoints.hpp"

#include <gtest/gtest.h>

namespace {

using namespace ratelimitd;

TEST(EnvoyStateQuery, TheFirstDomainIsTheDomainAndTheRestAreEntriesInOrder) {
    auto r = http::parse_envoy_state_query("domain=edge&remote_address=10.0.0.1&path=%2Flogin+x&domain=d2&flag");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->domain, "edge");
    ASSERT_EQ(r->descriptors.size(), 1u);
    const auto& e = r->descriptors.front().entries;
    ASSERT_EQ(e.size(), 4u);
    EXPECT_EQ(e[0].key, "remote_address");
    EXPECT_EQ(e[0].value, "10.0.0.1");
    EXPECT_EQ(e[1].value, "/login x");
    EXPECT_EQ(e[2].key, "domain");  // a descriptor key may be called "domain" too
    EXPECT_EQ(e[2].value, "d2");
    EXPECT_EQ(e[3].key, "flag");
    EXPECT_EQ(e[3].value, "");
}

TEST(EnvoyStateQuery, AMalformedEscapeIsRefused) {
    auto r = http::parse_envoy_state_query("domain=edge&k=%zz");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, errc::invalid_request);
    EXPECT_EQ(r.error().detail, "query: a '%' without two hex digits");
}

TEST(EnvoyStateQuery, BytesOutsideTextSurviveDecoding) {
    auto r = http::parse_envoy_state_query("domain=edge&k=%00%7B%0A");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->descriptors.front().entries.at(0).value, std::string("\0{\n", 3));
}

}  // namespace
