// cluster_refusal: a route with layered limits cannot run on Redis Cluster.
#include "ratelimitd/store/redis/cluster/cluster_rules.hpp"

#include <gtest/gtest.h>

using namespace ratelimitd;

TEST(ClusterRefusal, AcceptsSingleLimitRoutes) {
    policy::Registry r;
    policy::Route one;
    one.path = "/v1/*";
    one.policy = "api";
    one.limits.push_back({"api", std::nullopt});
    policy::Route none;
    none.path = "/health";
    none.policy = "none";
    r.routes = {one, none};
    EXPECT_FALSE(store::redis::cluster::cluster_refusal(r));
}

TEST(ClusterRefusal, NamesTheLayeredRoute) {
    policy::Registry r;
    policy::Route one;
    one.path = "/v1/*";
    one.policy = "api";
    one.limits.push_back({"api", std::nullopt});
    policy::Route layered;
    layered.method = "POST";
    layered.path = "/v1/exports";
    layered.policy = "per-key";
    layered.limits.push_back({"per-key", std::string("api_key")});
    layered.limits.push_back({"per-ip", std::string("client_ip")});
    r.routes = {one, layered};
    auto refusal = store::redis::cluster::cluster_refusal(r);
    ASSERT_TRUE(refusal);
    EXPECT_NE(refusal->find("routes[1] (POST /v1/exports)"), std::string::npos) << *refusal;
    EXPECT_NE(refusal->find("per-key, per-ip"), std::string::npos) << *refusal;
    EXPECT_NE(refusal->find("layered limits need a single Redis or Sentinel"), std::string::npos) << *refusal;
}
