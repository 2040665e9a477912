// normalize_path: the path /v1/auth matches routes on, as nginx would have routed it.
#include "ratelimitd/policy/path.hpp"

#include <gtest/gtest.h>

namespace {

using ratelimitd::policy::normalize_path;

TEST(NormalizePath, DropsQueryAndFragment) {
    EXPECT_EQ(normalize_path("/login?next=/admin"), "/login");
    EXPECT_EQ(normalize_path("/login#top"), "/login");
    EXPECT_EQ(normalize_path("/v1/orders?page=2&x=%2F"), "/v1/orders");
}

TEST(NormalizePath, DecodesPercentEscapes) {
    EXPECT_EQ(normalize_path("/%6cogin"), "/login");
    EXPECT_EQ(normalize_path("/%6C%6F%67%69%6E"), "/login");
    EXPECT_EQ(normalize_path("/a%2Fb"), "/a/b");
    EXPECT_EQ(normalize_path("/bad%zzescape%4"), "/bad%zzescape%4");  // not an escape: kept
}

TEST(NormalizePath, ResolvesDotSegmentsAndMergesSlashes) {
    EXPECT_EQ(normalize_path("//login"), "/login");
    EXPECT_EQ(normalize_path("/x/../login"), "/login");
    EXPECT_EQ(normalize_path("/./login"), "/login");
    EXPECT_EQ(normalize_path("/%2e%2e/%2e/login"), "/login");
    EXPECT_EQ(normalize_path("/../../login"), "/login");  // never above the root
    EXPECT_EQ(normalize_path("/v1//orders///7"), "/v1/orders/7");
}

TEST(NormalizePath, KeepsATrailingSlash) {
    EXPECT_EQ(normalize_path("/"), "/");
    EXPECT_EQ(normalize_path("/v1/"), "/v1/");
    EXPECT_EQ(normalize_path("/v1/x/.."), "/v1/");
    EXPECT_EQ(normalize_path("/v1/."), "/v1/");
    EXPECT_EQ(normalize_path(""), "/");
}

TEST(NormalizePath, AbsoluteFormKeepsOnlyThePath) {
    EXPECT_EQ(normalize_path("http://api.example.com/login?x"), "/login");
    EXPECT_EQ(normalize_path("HTTPS://api.example.com"), "/");
    EXPECT_EQ(normalize_path("login"), "/login");
}

}  // namespace
