// cluster_refusal: a layered route runs on Redis Cluster unless it layers a limit without an exact refund.
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

policy::Registry layered_registry(policy::Algorithm per_ip) {
    policy::Registry r;
    policy::Policy key;
    key.name = "per-key";
    key.algorithm = policy::Algorithm::fixed_window;
    policy::Policy ip = key;
    ip.name = "per-ip";
    ip.algorithm = per_ip;
    r.policies = {{"per-key", key}, {"per-ip", ip}};
    policy::Route one;
    one.path = "/v1/*";
    one.policy = "per-key";
    one.limits.push_back({"per-key", std::nullopt});
    policy::Route layered;
    layered.method = "POST";
    layered.path = "/v1/exports";
    layered.policy = "per-key";
    layered.limits.push_back({"per-key", std::string("api_key")});
    layered.limits.push_back({"per-ip", std::string("client_ip")});
    r.routes = {one, layered};
    return r;
}

// Layered limits run on a cluster slot by slot, with refunds (issue 25): every algorithm with
// an exact refund is accepted.
TEST(ClusterRefusal, AcceptsLayeredRoutesOfRefundableAlgorithms) {
    for (auto a : {policy::Algorithm::fixed_window, policy::Algorithm::token_bucket, policy::Algorithm::gcra,
                   policy::Algorithm::sliding_log, policy::Algorithm::concurrency}) {
        EXPECT_FALSE(store::redis::cluster::cluster_refusal(layered_registry(a))) << policy::to_string(a);
    }
}

TEST(ClusterRefusal, NamesTheLayeredRouteWithASlidingWindow) {
    auto refusal = store::redis::cluster::cluster_refusal(layered_registry(policy::Algorithm::sliding_window));
    ASSERT_TRUE(refusal);
    EXPECT_NE(refusal->find("routes[1] (POST /v1/exports)"), std::string::npos) << *refusal;
    EXPECT_NE(refusal->find("per-ip uses sliding_window"), std::string::npos) << *refusal;
    EXPECT_NE(refusal->find("a single Redis or Sentinel"), std::string::npos) << *refusal;
}
