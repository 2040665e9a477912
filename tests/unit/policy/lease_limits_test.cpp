// `algorithm: concurrency`: limit and lease load, and every misuse is refused with a message
// naming the field.
#include "ratelimitd/policy/registry_loader.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using ratelimitd::test::parse_error_of;

using namespace ratelimitd::policy;
using namespace std::chrono_literals;

/// The refusal of a config whose one policy, `exports`, is `policy_body`.
std::string exports_policy_error_of(const std::string& policy_body) {
    return parse_error_of("policies:\n  exports: " + policy_body + "\n", "leases.yaml");
}

TEST(LeaseLimits, LimitAndLeaseLoadAndTheLeaseIsTheWindow) {
    const Config c = parse_config("policies:\n  exports: { algorithm: concurrency, limit: 5, lease: 30s }\n", "l.yaml");
    const Policy& p = c.registry.policies.at("exports");
    EXPECT_EQ(p.algorithm, Algorithm::concurrency);
    EXPECT_STREQ(to_string(Algorithm::concurrency), "concurrency");
    EXPECT_EQ(p.limit, 5);
    EXPECT_EQ(p.lease, 30s);
    EXPECT_EQ(p.window, 30s);
    EXPECT_EQ(p.max_cost(), 1) << "a lease is one slot";
}

TEST(LeaseLimits, PlansOverrideLimitAndLease) {
    const Config c = parse_config(
        "policies:\n  exports: { algorithm: concurrency, limit: 5, lease: 30s }\n"
        "plans:\n  pro:\n    exports: { limit: 20, lease: 2m }\n",
        "l.yaml");
    const Policy& p = c.registry.plans.at("pro").policies.at("exports");
    EXPECT_EQ(p.limit, 20);
    EXPECT_EQ(p.lease, 2min);
}

TEST(LeaseLimits, MisusesAreRefusedNamingTheField) {
    EXPECT_NE(exports_policy_error_of("{ algorithm: concurrency, limit: 5 }").find("policies.exports.lease: missing"),
              std::string::npos)
        << exports_policy_error_of("{ algorithm: concurrency, limit: 5 }");
    EXPECT_NE(exports_policy_error_of("{ algorithm: concurrency, limit: 5, lease: 30s, window: 1m }")
                  .find("policies.exports.window: not allowed with algorithm concurrency"),
              std::string::npos);
    EXPECT_NE(exports_policy_error_of("{ algorithm: concurrency, limit: 5, lease: 30s, burst: 9 }").find("exports.burst"),
              std::string::npos);
    EXPECT_NE(exports_policy_error_of("{ algorithm: concurrency, limit: 100001, lease: 30s }").find("exports.limit"),
              std::string::npos);
    EXPECT_NE(exports_policy_error_of("{ algorithm: concurrency, limit: 5, lease: 2d }").find("exports.lease: expected at most 1d"),
              std::string::npos);
    EXPECT_NE(exports_policy_error_of("{ algorithm: fixed_window, limit: 5, window: 1m, lease: 30s }")
                  .find("exports.lease: only allowed with algorithm concurrency"),
              std::string::npos);
}

}  // namespace
