// What a reload's audit entry says changed: every limit with its numbers, added, removed and
// changed old -> new, a bounded listing, and a digest that follows the numbers.
#include "ratelimitd/audit/config_changes.hpp"

#include "ratelimitd/policy/registry_loader.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::audit {
namespace {

using json = nlohmann::ordered_json;
using namespace std::chrono_literals;

policy::Policy fixed(const std::string& name, std::int64_t limit, std::chrono::milliseconds window) {
    policy::Policy p;
    p.name = name;
    p.algorithm = policy::Algorithm::fixed_window;
    p.limit = limit;
    p.burst = limit;
    p.window = window;
    return p;
}

policy::Registry registry_of(std::initializer_list<policy::Policy> policies) {
    policy::Registry r;
    for (const auto& p : policies) r.policies[p.name] = p;
    return r;
}

TEST(ConfigChanges, EveryPolicyWithItsNumbers) {
    auto bucket = fixed("api", 60, 60s);
    bucket.algorithm = policy::Algorithm::token_bucket;
    bucket.burst = 120;
    const auto limits = enforced_limits(registry_of({bucket, fixed("login", 5, 1min)}));
    EXPECT_EQ(limits.at("api"), json({{"algorithm", "token_bucket"},
                                      {"limit", 60},
                                      {"window", "1m"},
                                      {"burst", 120},
                                      {"on_store_error", "allow"}}));
    EXPECT_EQ(limits.at("login"),
              json({{"algorithm", "fixed_window"}, {"limit", 5}, {"window", "1m"}, {"on_store_error", "allow"}}));
}

TEST(ConfigChanges, AddedRemovedAndChangedWithOldAndNewNumbers) {
    const auto before = enforced_limits(registry_of({fixed("api", 10, 60s), fixed("gone", 1, 1s), fixed("same", 3, 1s)}));
    const auto after = enforced_limits(registry_of({fixed("api", 20, 60s), fixed("new", 7, 1h), fixed("same", 3, 1s)}));
    const auto changes = limit_changes(before, after);
    EXPECT_EQ(changes["changed"]["api"]["old"]["limit"], 10);
    EXPECT_EQ(changes["changed"]["api"]["new"]["limit"], 20);
    EXPECT_EQ(changes["added"]["new"]["window"], "1h");
    EXPECT_EQ(changes["removed"]["gone"]["limit"], 1);
    EXPECT_FALSE(changes["changed"].contains("same"));
    EXPECT_EQ(changes["changed"].size(), 1u);
}

TEST(ConfigChanges, PlansAndTenantOverridesAreLimitsOfTheirOwn) {
    auto r = registry_of({fixed("api", 10, 60s)});
    auto pro = fixed("api", 100, 60s);
    pro.plan = "pro";
    r.plans["pro"].policies["api"] = pro;
    auto own = fixed("api", 1000, 60s);
    own.plan = policy::tenant_override_label;
    r.tenants["acme"].overrides["api"] = own;
    const auto limits = enforced_limits(r);
    EXPECT_EQ(limits.at("api@pro")["limit"], 100);
    EXPECT_EQ(limits.at("api@tenant:acme")["limit"], 1000);
}

TEST(ConfigChanges, AListingIsBoundedAndCountsTheRest) {
    LimitSet after;
    for (int i = 0; i < 250; ++i) after["p" + std::to_string(i)] = json({{"limit", i}});
    const auto changes = limit_changes({}, after, 100);
    EXPECT_EQ(changes["added"].size(), 100u);
    EXPECT_EQ(changes["more_added"], 150);
}

TEST(ConfigChanges, TheDigestFollowsTheNumbers) {
    const auto a = limits_digest(enforced_limits(registry_of({fixed("api", 10, 60s)})));
    EXPECT_EQ(a, limits_digest(enforced_limits(registry_of({fixed("api", 10, 60s)}))));
    EXPECT_NE(a, limits_digest(enforced_limits(registry_of({fixed("api", 11, 60s)}))));
    EXPECT_EQ(a.rfind("sha256:", 0), 0u);
    EXPECT_EQ(a.size(), 7u + 64u);
}

// The digest is SHA-256 of the limits as one JSON object by name, in name order, keys escaped
// as JSON escapes them: the same text whether written whole or piece by piece (it was built as
// one ordered_json object, whose key lookups made 90,000 xDS rules quadratic).
TEST(ConfigChanges, TheDigestIsOfTheCanonicalText) {
    LimitSet limits;
    limits["z"] = json({{"limit", 2}, {"window", "1m"}});
    limits["a\"b"] = json({{"limit", 1}});
    // sha256 of {"a\"b":{"limit":1},"z":{"limit":2,"window":"1m"}}
    EXPECT_EQ(limits_digest(limits), "sha256:35c988143e7687fdefc8369320da52e084f5028bcbc9ea3f2eaaa3fcd0150d64");
    EXPECT_EQ(limits_digest({}), "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");  // of {}
}

// An `rlqs:` rule is a limit of its own, "rlqs:<domain>/<rule>", with whatever decides what its
// buckets are assigned: a changed limit, fallback, blanket or shadow is a changed rule.
TEST(ConfigChanges, RlqsRulesAreLimitsWithTheirNumbers) {
    const auto before = enforced_limits(policy::parse_config(R"(rlqs:
  web:
    blocked: {match: {kind: blocked}, blanket: deny_all}
    tenants: {match: {tenant: "t-*"}, limit: 50, window: 1m, fallback: local_share, expected_envoys: 4}
    rest: {limit: 1000, window: 10s}
)", "before.yaml").registry);
    const auto after = enforced_limits(policy::parse_config(R"(rlqs:
  web:
    blocked: {match: {kind: blocked}, blanket: allow_all}
    tenants: {match: {tenant: "t-*"}, limit: 80, window: 1m, fallback: local_share, expected_envoys: 4}
    rest: {limit: 1000, window: 10s, shadow: true}
  mobile:
    all: {limit: 5, window: 1s, strategy: requests_per_time_unit}
)", "after.yaml").registry);
    EXPECT_EQ(before.at("rlqs:web/tenants"), json({{"match", {{"tenant", "t-*"}}},
                                                  {"limit", 50},
                                                  {"window", "1m"},
                                                  {"strategy", "token_bucket"},
                                                  {"fallback", "local_share"},
                                                  {"expected_envoys", 4},
                                                  {"reporting_interval", "5s"},
                                                  {"assignment_ttl", "15s"},
                                                  {"idle_after", "50s"}}));
    const auto changes = limit_changes(before, after);
    EXPECT_EQ(changes["changed"]["rlqs:web/blocked"]["old"]["blanket"], "deny_all");
    EXPECT_EQ(changes["changed"]["rlqs:web/blocked"]["new"]["blanket"], "allow_all");
    EXPECT_EQ(changes["changed"]["rlqs:web/tenants"]["new"]["limit"], 80);
    EXPECT_EQ(changes["changed"]["rlqs:web/rest"]["new"]["shadow"], true);
    EXPECT_EQ(changes["added"]["rlqs:mobile/all"]["strategy"], "requests_per_time_unit");
    EXPECT_EQ(changes["changed"].size(), 3u);
    EXPECT_TRUE(limit_changes(after, before)["removed"].contains("rlqs:mobile/all"));
}

}  // namespace
}  // namespace ratelimitd::audit
