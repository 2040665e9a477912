// rediss://, rediss-sentinel:// and rediss-cluster://: the same URLs as without the "s", with
// `tls` set on every endpoint they lead to, and describe() saying which it is.
#include "ratelimitd/store/redis/cluster/cluster_endpoint.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/sentinel.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::store::redis {
namespace {

TEST(TlsUrls, RedissIsRedisWithTls) {
    auto ep = parse_redis_url("rediss://:p%40ss@cache.example.com:6380/2");
    ASSERT_TRUE(ep) << ep.error().detail;
    EXPECT_TRUE(ep->tls);
    EXPECT_EQ(ep->host, "cache.example.com");
    EXPECT_EQ(ep->port, 6380);
    EXPECT_EQ(ep->password, "p@ss");
    EXPECT_EQ(ep->db, 2);
    EXPECT_EQ(ep->describe(), "rediss://cache.example.com:6380/2");
    EXPECT_FALSE(ep->tls_options.insecure_skip_verify) << "verification is on by default";
}

TEST(TlsUrls, RedisStaysPlain) {
    auto ep = parse_redis_url("redis://127.0.0.1:6379");
    ASSERT_TRUE(ep);
    EXPECT_FALSE(ep->tls);
    EXPECT_EQ(ep->describe(), "redis://127.0.0.1:6379/0");
}

TEST(TlsUrls, OtherSchemesAreRefusedNamingBoth) {
    for (const char* url : {"redisss://h:1", "rediss:/h:1", "http://h:1", "REDISS://h:1"}) {
        auto ep = parse_redis_url(url);
        ASSERT_FALSE(ep) << url;
        EXPECT_NE(ep.error().detail.find("redis:// or rediss://"), std::string::npos) << ep.error().detail;
    }
}

TEST(TlsUrls, RedissSentinelCarriesTlsToSentinelsAndDataNodes) {
    ASSERT_TRUE(is_sentinel_url("rediss-sentinel://h/m"));
    auto u = parse_sentinel_url("rediss-sentinel://:pw@s1:26379,s2/mymaster/1");
    ASSERT_TRUE(u) << u.error().detail;
    EXPECT_TRUE(u->tls);
    u->tls_options.server_name = "redis.internal";
    const Endpoint data = u->endpoint_at("10.0.0.5", 6379);
    EXPECT_TRUE(data.tls);
    EXPECT_EQ(data.tls_options.server_name, "redis.internal");
    EXPECT_EQ(data.password, "pw");
    const Endpoint sentinel = u->sentinel_endpoint(1);
    EXPECT_TRUE(sentinel.tls);
    EXPECT_EQ(sentinel.host, "s2");
    EXPECT_EQ(sentinel.port, 26379);
    EXPECT_FALSE(sentinel.password) << "the data nodes' password is not sent to a sentinel";
    EXPECT_EQ(u->describe(), "rediss-sentinel://s1:26379,s2:26379/mymaster/1");
}

TEST(TlsUrls, RedisSentinelStaysPlain) {
    auto u = parse_sentinel_url("redis-sentinel://s1/m");
    ASSERT_TRUE(u);
    EXPECT_FALSE(u->tls);
    EXPECT_FALSE(u->endpoint_at("h", 1).tls);
}

TEST(TlsUrls, RedissClusterSeedsAreTls) {
    ASSERT_TRUE(cluster::is_cluster_url("rediss-cluster://h:1"));
    auto c = cluster::parse_cluster_url("rediss-cluster://:pw@n1:7000,n2:7001");
    ASSERT_TRUE(c) << c.error().detail;
    ASSERT_EQ(c->seeds.size(), 2u);
    for (const auto& s : c->seeds) EXPECT_TRUE(s.tls);
    EXPECT_EQ(c->describe(), "rediss-cluster://n1:7000,n2:7001");
    auto plain = cluster::parse_cluster_url("redis-cluster://n1:7000");
    ASSERT_TRUE(plain);
    EXPECT_FALSE(plain->seeds[0].tls);
}

}  // namespace
}  // namespace ratelimitd::store::redis
