// parse_sentinel_url: what a redis-sentinel:// URL may hold, and errors that name the fault.
#include "ratelimitd/store/redis/sentinel.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::store::redis {
namespace {

TEST(ParseSentinelUrl, ReadsSentinelsMasterAndDb) {
    auto u = parse_sentinel_url("redis-sentinel://10.0.0.1:26379,10.0.0.2:26380,[::1]:5000/mymaster/3");
    ASSERT_TRUE(u) << u.error().detail;
    ASSERT_EQ(u->sentinels.size(), 3u);
    EXPECT_EQ(u->sentinels[0], (SentinelAddress{"10.0.0.1", 26379}));
    EXPECT_EQ(u->sentinels[1], (SentinelAddress{"10.0.0.2", 26380}));
    EXPECT_EQ(u->sentinels[2], (SentinelAddress{"::1", 5000}));
    EXPECT_EQ(u->master_name, "mymaster");
    EXPECT_EQ(u->db, 3);
    EXPECT_FALSE(u->password);
    EXPECT_FALSE(u->username);
    EXPECT_FALSE(u->sentinel_password);
}

TEST(ParseSentinelUrl, PortDefaultsTo26379AndDbTo0) {
    auto u = parse_sentinel_url("redis-sentinel://sentinel-a,sentinel-b/m");
    ASSERT_TRUE(u) << u.error().detail;
    EXPECT_EQ(u->sentinels[0], (SentinelAddress{"sentinel-a", 26379}));
    EXPECT_EQ(u->sentinels[1], (SentinelAddress{"sentinel-b", 26379}));
    EXPECT_EQ(u->master_name, "m");
    EXPECT_EQ(u->db, 0);
    EXPECT_TRUE(parse_sentinel_url("redis-sentinel://h:1/m/"));
}

TEST(ParseSentinelUrl, CredentialsAreTheDataNodesAndReachTheEndpoint) {
    auto u = parse_sentinel_url("redis-sentinel://app:p%40ss@h:26379/m/2?sentinel_password=s%2Fecret");
    ASSERT_TRUE(u) << u.error().detail;
    EXPECT_EQ(u->username, "app");
    EXPECT_EQ(u->password, "p@ss");
    EXPECT_EQ(u->sentinel_password, "s/ecret");
    const Endpoint ep = u->endpoint_at("10.1.1.1", 6380);
    EXPECT_EQ(ep.host, "10.1.1.1");
    EXPECT_EQ(ep.port, 6380);
    EXPECT_EQ(ep.username, "app");
    EXPECT_EQ(ep.password, "p@ss");
    EXPECT_EQ(ep.db, 2);

    auto no_user = parse_sentinel_url("redis-sentinel://:pw@h/m");
    ASSERT_TRUE(no_user);
    EXPECT_EQ(no_user->password, "pw");
    EXPECT_FALSE(no_user->username);
}

TEST(ParseSentinelUrl, DescribeNamesSentinelsAndMasterNeverAPassword) {
    auto u = parse_sentinel_url("redis-sentinel://u:hunter2@a:1,[::1]:2/orders/1?sentinel_password=swordfish");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->describe(), "redis-sentinel://a:1,[::1]:2/orders/1");
}

TEST(ParseSentinelUrl, IsSentinelUrlLooksAtTheSchemeOnly) {
    EXPECT_TRUE(is_sentinel_url("redis-sentinel://h/m"));
    EXPECT_FALSE(is_sentinel_url("redis://h:6379"));
    EXPECT_FALSE(is_sentinel_url("redis-cluster://h:6379"));
}

TEST(ParseSentinelUrl, ErrorsNameWhatIsWrongWithoutEchoingSecrets) {
    struct BadUrl {
        const char* url;
        const char* names;  ///< a fragment the message must contain
    };
    const BadUrl cases[] = {
        {"redis://:hunter2@h:6379/m", "start with redis-sentinel://"},
        {"redis-sentinel://:hunter2@h:26379", "master name is missing"},
        {"redis-sentinel://:hunter2@h:26379/", "master name after '/' is empty"},
        {"redis-sentinel://:hunter2@/m", "no sentinel address"},
        {"redis-sentinel://a:1,,b:2/m", "sentinel 2 is empty"},
        {"redis-sentinel://a:1,b:2,/m", "sentinel 3 is empty"},
        {"redis-sentinel://a:1,b:x/m", "sentinel 2: the port must be a number 1..65535"},
        {"redis-sentinel://a:70000/m", "sentinel 1: the port must be a number"},
        {"redis-sentinel://a:/m", "sentinel 1: the port after ':' is empty"},
        {"redis-sentinel://:26379/m", "sentinel 1: the host is empty"},
        {"redis-sentinel://[::1/m", "sentinel 1: unclosed '['"},
        {"redis-sentinel://[::1]x/m", "sentinel 1: expected ':' after ']'"},
        {"redis-sentinel://h/m/x", "database after the master name must be a number"},
        {"redis-sentinel://h/m/-1", "database after the master name must be a number"},
        {"redis-sentinel://:hunter%2@h/m", "bad percent-escape in the password"},
        {"redis-sentinel://h/m?password=hunter2", "unknown query parameter"},
        {"redis-sentinel://h/m?sentinel_password=", "sentinel_password is empty"},
        {"redis-sentinel://h/m?sentinel_password=%zz", "bad percent-escape in sentinel_password"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.url);
        auto u = parse_sentinel_url(c.url);
        ASSERT_FALSE(u);
        EXPECT_EQ(u.error().code, errc::invalid_request);
        EXPECT_NE(u.error().detail.find(c.names), std::string::npos) << u.error().detail;
        EXPECT_EQ(u.error().detail.find("hunter2"), std::string::npos) << u.error().detail;
    }
}

}  // namespace
}  // namespace ratelimitd::store::redis
