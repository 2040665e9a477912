// redis-cluster:// URLs: seeds, shared credentials, db 0 only, no password in messages.
#include "ratelimitd/store/redis/cluster/cluster_endpoint.hpp"

#include <gtest/gtest.h>

using namespace ratelimitd::store::redis::cluster;

TEST(ParseClusterUrl, ReadsEverySeedWithTheCredentials) {
    auto ep = parse_cluster_url("redis-cluster://app:s%40cret@127.0.0.1:7000,10.0.0.2:7001,[::1]:7002");
    ASSERT_TRUE(ep) << ep.error().detail;
    ASSERT_EQ(ep->seeds.size(), 3u);
    EXPECT_EQ(ep->seeds[0].host, "127.0.0.1");
    EXPECT_EQ(ep->seeds[0].port, 7000);
    EXPECT_EQ(ep->seeds[1].host, "10.0.0.2");
    EXPECT_EQ(ep->seeds[2].host, "::1");
    for (const auto& s : ep->seeds) {
        EXPECT_EQ(s.username, "app");
        EXPECT_EQ(s.password, "s@cret");
        EXPECT_EQ(s.db, 0);
    }
    EXPECT_EQ(ep->describe(), "redis-cluster://127.0.0.1:7000,10.0.0.2:7001,[::1]:7002");
}

TEST(ParseClusterUrl, DefaultsAndPasswordOnly) {
    auto ep = parse_cluster_url("redis-cluster://:pw@h1,h2:7001/0");
    ASSERT_TRUE(ep) << ep.error().detail;
    ASSERT_EQ(ep->seeds.size(), 2u);
    EXPECT_EQ(ep->seeds[0].port, 6379);
    EXPECT_FALSE(ep->seeds[0].username);
    EXPECT_EQ(ep->seeds[1].password, "pw");
}

TEST(ParseClusterUrl, RefusesWhatIsNotACluster) {
    EXPECT_TRUE(is_cluster_url("redis-cluster://h:1"));
    EXPECT_FALSE(is_cluster_url("redis://h:1"));
    for (const char* bad : {"redis://h:1", "redis-cluster://", "redis-cluster://h:1,,h:2", "redis-cluster://h:99999",
                            "redis-cluster://:hunter2@h:1/3"}) {
        auto ep = parse_cluster_url(bad);
        ASSERT_FALSE(ep) << bad;
        EXPECT_EQ(ep.error().detail.find("hunter2"), std::string::npos) << ep.error().detail;
        EXPECT_NE(ep.error().detail.find("redis-cluster://"), std::string::npos) << ep.error().detail;
    }
    EXPECT_NE(parse_cluster_url("redis-cluster://h:1/3").error().detail.find("only database 0"), std::string::npos);
}
