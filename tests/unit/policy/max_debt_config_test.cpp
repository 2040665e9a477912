// `max_debt:` in the registry: its default, where it may stand, and the bounds it is refused
// beyond (issue 31: a report's debt is bounded, so a key in debt lives a bounded time).
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using ratelimitd::test::parse_error_of;

using namespace ratelimitd::policy;

TEST(MaxDebtConfig, DefaultsToTheLimitAndIsReadPerPolicyWindowPlanAndOverride) {
    const Config c = parse_config(R"(
policies:
  plain: {algorithm: token_bucket, limit: 5, window: 1m}
  deep: {algorithm: gcra, limit: 5, window: 1m, max_debt: 50}
  zero: {algorithm: fixed_window, limit: 5, window: 1m, max_debt: 0}
  tiered:
    algorithm: sliding_window
    max_debt: 7
    windows:
      - {limit: 3, window: 1m}
      - {limit: 10, window: 1h, max_debt: 100}
plans:
  pro:
    plain: {limit: 50, window: 1m}
    deep: {limit: 10, window: 1m, max_debt: 3}
)",
                                  "debt.yaml");
    EXPECT_FALSE(c.registry.find("plain")->max_debt.has_value());
    EXPECT_EQ(c.registry.find("plain")->debt_bound(), 5);
    EXPECT_EQ(c.registry.find("deep")->debt_bound(), 50);
    EXPECT_EQ(c.registry.find("zero")->debt_bound(), 0);
    const Policy& t = *c.registry.find("tiered");
    EXPECT_EQ(t.windows[0].debt_bound(), 7);
    EXPECT_EQ(t.windows[1].debt_bound(), 100);
    const Plan& pro = c.registry.plans.at("pro");
    EXPECT_EQ(pro.policies.at("plain").debt_bound(), 50) << "the plan's own limit";
    EXPECT_EQ(pro.policies.at("deep").debt_bound(), 3);
}

TEST(MaxDebtConfig, RefusalsNameTheFieldAndTheBound) {
    const std::string beyond = parse_error_of("policies:\n  p: {algorithm: token_bucket, limit: 5, window: 1m, max_debt: 501}\n", "debt.yaml");
    EXPECT_NE(beyond.find("debt.yaml"), std::string::npos) << beyond;
    EXPECT_NE(beyond.find("policies.p.max_debt: expected at most 100 x limit (500"), std::string::npos) << beyond;
    EXPECT_NE(parse_error_of("policies:\n  p: {algorithm: fixed_window, limit: 5, window: 1m, max_debt: -1}\n", "debt.yaml")
                  .find("policies.p.max_debt"),
              std::string::npos);
    EXPECT_NE(parse_error_of("policies:\n  p: {algorithm: fixed_window, limit: 5, window: 1m, max_debt: many}\n", "debt.yaml")
                  .find("policies.p.max_debt"),
              std::string::npos);
    EXPECT_NE(parse_error_of("policies:\n  p: {algorithm: concurrency, limit: 5, lease: 30s, max_debt: 1}\n", "debt.yaml")
                  .find("policies.p.max_debt: not allowed with algorithm concurrency"),
              std::string::npos);
    // A window's own bound, from the policy-wide value.
    EXPECT_NE(parse_error_of("policies:\n  p:\n    algorithm: fixed_window\n    max_debt: 200\n    windows:\n"
                       "      - {limit: 100, window: 1m}\n      - {limit: 1, window: 1h}\n", "debt.yaml")
                  .find("policies.p.windows[1].max_debt: expected at most 100 x limit (100:"),
              std::string::npos);
    // A plan that lowers the limit under an inherited max_debt.
    EXPECT_NE(parse_error_of("policies:\n  p: {algorithm: gcra, limit: 100, window: 1m, max_debt: 1000}\n"
                       "plans:\n  small:\n    p: {limit: 5, window: 1m}\n", "debt.yaml")
                  .find("plans.small.p.max_debt: expected at most 100 x limit (500:"),
              std::string::npos);
    // Beyond what the scripts count exactly.
    EXPECT_NE(parse_error_of("policies:\n  p: {algorithm: token_bucket, limit: 1000000000, window: 365d, long_ttl: true, "
                       "burst: 1000, max_debt: 100000000}\n", "debt.yaml")
                  .find("so the debt stays exact in Lua"),
              std::string::npos);
}

}  // namespace
