// `rlqs:` in the registry: the rules read in file order with their defaults, a bucket matched
// by exact values and wildcards, and what is refused, each message naming the field.
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rlqs_rules.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using ratelimitd::test::parse_error_of;

using namespace ratelimitd::policy;
using namespace std::chrono_literals;

const std::string rules = R"(rlqs:
  web:
    blocked: {match: {kind: blocked}, blanket: deny_all}
    tenants: {match: {kind: api, tenant: "t-*"}, limit: 50, window: 1m, strategy: requests_per_time_unit}
    rest: {limit: 1000, window: 10s, shadow: true, reporting_interval: 2s, assignment_ttl: 9s,
           fallback: local_share, expected_envoys: 4}
)";

TEST(RlqsConfig, RulesAreReadInFileOrderWithTheirDefaults) {
    const Config c = parse_config(rules, "rlqs.yaml");
    ASSERT_TRUE(c.registry.rlqs);
    const auto& web = c.registry.rlqs->domains.at("web");
    ASSERT_EQ(web.size(), 3U);
    EXPECT_EQ(web[0].name, "blocked");
    EXPECT_EQ(web[0].blanket, RlqsBlanket::deny_all);
    EXPECT_EQ(web[1].limit, 50);
    EXPECT_EQ(web[1].window, 60s);
    EXPECT_EQ(web[1].strategy, RlqsStrategy::requests_per_time_unit);
    EXPECT_EQ(web[1].reporting_interval, 5s);  // the default
    EXPECT_EQ(web[1].assignment_ttl, 15s);     // three intervals
    EXPECT_EQ(web[1].idle_after, 50s);         // ten intervals
    EXPECT_EQ(web[2].strategy, RlqsStrategy::token_bucket);
    EXPECT_TRUE(web[2].shadow);
    EXPECT_EQ(web[2].reporting_interval, 2s);
    EXPECT_EQ(web[2].assignment_ttl, 9s);
    EXPECT_EQ(web[1].fallback, RlqsFallback::keep_last);  // the default
    EXPECT_EQ(web[1].expected_envoys, 1);
    EXPECT_EQ(web[2].fallback, RlqsFallback::local_share);
    EXPECT_EQ(web[2].expected_envoys, 4);
}

TEST(RlqsConfig, TheFirstRuleWhoseMatchesAllHoldNamesTheBucket) {
    const Config c = parse_config(rules, "rlqs.yaml");
    const RlqsRules& r = *c.registry.rlqs;
    const auto name_of = [&r](const std::string& domain, RlqsBucketId id) {
        const RlqsRule* rule = r.find(domain, id);
        return rule ? rule->name : std::string("(none)");
    };
    EXPECT_EQ(name_of("web", {{"kind", "blocked"}}), "blocked");
    EXPECT_EQ(name_of("web", {{"kind", "api"}, {"tenant", "t-1"}}), "tenants");
    EXPECT_EQ(name_of("web", {{"kind", "api"}, {"tenant", "x-1"}}), "rest");  // the wildcard misses
    EXPECT_EQ(name_of("web", {{"kind", "api"}}), "rest");                      // tenant missing
    EXPECT_EQ(name_of("other", {{"kind", "blocked"}}), "(none)");
}

TEST(RlqsConfig, RefusalsNameTheField) {
    const auto refused = [](const std::string& rule) {
        return parse_error_of("rlqs:\n  web:\n    r: " + rule + "\n", "rlqs.yaml");
    };
    EXPECT_EQ(refused("{match: {kind: a}}"),
              "rlqs.yaml: rlqs.web.r: expected a limit and a window, or a blanket (allow_all or deny_all)");
    EXPECT_EQ(refused("{blanket: deny_all, limit: 5}"), "rlqs.yaml: rlqs.web.r: a blanket rule has no limit, window or strategy");
    EXPECT_EQ(refused("{limit: 5, window: 2s, strategy: requests_per_time_unit}"),
              "rlqs.yaml: rlqs.web.r.window: expected 1s, 1m, 1h or 1d with requests_per_time_unit (Envoy's time units)");
    EXPECT_EQ(refused("{limit: 5, window: 1m, reporting_interval: 5s, assignment_ttl: 5s}"),
              "rlqs.yaml: rlqs.web.r.assignment_ttl: expected longer than reporting_interval (5000ms)");
    EXPECT_NE(refused("{limit: 5, window: 1m, match: {" + std::string(129, 'k') + ": v}}").find("expected a key of 1 to 128 bytes"),
              std::string::npos);
    EXPECT_EQ(refused("{limit: 5, window: 1m, reporting_interval: 5s, idle_after: 4s}"),
              "rlqs.yaml: rlqs.web.r.idle_after: expected at least reporting_interval (5000ms)");
    EXPECT_NE(refused("{limit: 0, window: 1m}").find("rlqs.web.r.limit"), std::string::npos);
    EXPECT_NE(refused("{limit: 5, window: 1m, colour: red}").find("colour"), std::string::npos);
    EXPECT_NE(refused("{limit: 5, window: 1m, fallback: allow}").find("rlqs.web.r.fallback"), std::string::npos);
    EXPECT_NE(refused("{limit: 5, window: 1m, expected_envoys: 0}").find("rlqs.web.r.expected_envoys"),
              std::string::npos);
}

}  // namespace
