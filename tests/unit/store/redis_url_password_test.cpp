// Passwords in store URLs are percent-decoded by the project's one decoder: %XY with two hex
// digits, nothing else (a sign is not a digit, so "%-1" is malformed, not byte 0xFF).
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/sentinel.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::store::redis {
namespace {

TEST(RedisUrlPassword, EscapesAreDecoded) {
    auto ep = parse_redis_url("redis://:a%2Fb%3a@127.0.0.1:6379");
    ASSERT_TRUE(ep) << ep.error().detail;
    EXPECT_EQ(ep->password, "a/b:");
}

TEST(RedisUrlPassword, MalformedEscapesAreRefusedWithoutEchoingThePassword) {
    for (const char* url : {"redis://:secret%-1@h:6379", "redis://:secret%+f@h:6379", "redis://:secret%4@h:6379",
                            "redis://:secret%zz@h:6379"}) {
        auto ep = parse_redis_url(url);
        ASSERT_FALSE(ep) << url;
        EXPECT_NE(ep.error().detail.find("percent-escape"), std::string::npos) << ep.error().detail;
        EXPECT_EQ(ep.error().detail.find("secret"), std::string::npos) << ep.error().detail;
    }
}

TEST(RedisUrlPassword, SentinelPasswordUsesTheSameRules) {
    auto ok = parse_sentinel_url("redis-sentinel://h:26379/m?sentinel_password=p%40ss");
    ASSERT_TRUE(ok) << ok.error().detail;
    EXPECT_EQ(ok->sentinel_password, "p@ss");
    EXPECT_FALSE(parse_sentinel_url("redis-sentinel://h:26379/m?sentinel_password=p%-1"));
}

}  // namespace
}  // namespace ratelimitd::store::redis
