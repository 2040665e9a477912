// policy::plan for ShouldRateLimit calls: refusals, costs, replaces, shadow, and keys.
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/rls_value.hpp"

#include "unit/policy/rls_noon.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace {

using ratelimitd::test::noon;

using namespace ratelimitd;
using namespace ratelimitd::policy;
using Kind = RlsDescriptorPlan::Kind;

const char* const planner_rules = R"(
prefix: rl
domains:
  - domain: edge
    descriptors:
      - {key: ip, rate_limit: {unit: minute, requests_per_unit: 10}}
      - {key: ip, value: 50.0.0.5, rate_limit: {unit: second, requests_per_unit: 0}}
      - {key: ip, value: 10.0.0.1}
      - {key: free, rate_limit: {unlimited: true}}
      - {key: path, value: /login, rate_limit: {unit: minute, requests_per_unit: 5, name: login}}
      - key: path
        value: /admin
        rate_limit: {unit: minute, requests_per_unit: 3, replaces: [{name: login}]}
      - {key: trial, shadow_mode: true, rate_limit: {unit: hour, requests_per_unit: 2}}
      - {key: user, detailed_metric: true, rate_limit: {unit: day, requests_per_unit: 100}}
      - {key: bucket, algorithm: token_bucket, on_store_error: deny, rate_limit: {unit: second, requests_per_unit: 4}}
      - {key: weekly, rate_limit: {unit: WEEK, requests_per_unit: 3}}
)";


class RlsPlanner : public ::testing::Test {
protected:
    std::shared_ptr<const Registry> reg = std::make_shared<const Registry>(parse_config(planner_rules, "r.yaml").registry);

    static RlsDescriptor one(std::string key, std::string value, std::optional<std::uint64_t> hits = std::nullopt) {
        return RlsDescriptor{{RlsEntry{std::move(key), std::move(value)}}, hits, {}};
    }
    result<RlsPlan> run(std::vector<RlsDescriptor> ds, std::uint64_t hits = 0, std::string domain = "edge") const {
        return plan(reg, RlsRequest{std::move(domain), std::move(ds), hits}, noon);
    }
    std::string refusal(std::vector<RlsDescriptor> ds, std::uint64_t hits = 0, std::string domain = "edge") const {
        auto p = run(std::move(ds), hits, std::move(domain));
        if (p) return "planned";
        return std::string(to_string(p.error().code)) + ": " + p.error().detail;
    }
};

TEST_F(RlsPlanner, RefusesMalformedCallsNamingTheField) {
    EXPECT_EQ(refusal({one("ip", "1")}, 0, ""), "invalid_request: domain: expected a domain, got an empty one");
    EXPECT_EQ(refusal({}), "invalid_request: descriptors: expected at least one descriptor");
    EXPECT_EQ(refusal({one("ip", "1"), RlsDescriptor{}}),
              "invalid_request: descriptors[1].entries: expected at least one entry");
    EXPECT_EQ(refusal({one("", "1")}), "invalid_request: descriptors[0].entries[0].key: expected a key, got an empty one");
    EXPECT_EQ(refusal(std::vector<RlsDescriptor>(65, one("ip", "1"))),
              "invalid_request: descriptors: 65 descriptors, at most 64 allowed");
    EXPECT_EQ(refusal({one(std::string(1025, 'k'), "v")}),
              "invalid_request: descriptors[0].entries[0].key: 1025 bytes, at most 1024 allowed");
}

// What a proxy's client shapes is decided: a long value (as the decoder bounds it) is counted
// on its own key beside the call's other descriptors, and a descriptor deeper than any rule
// matches none (OK, nothing charged), as envoyproxy/ratelimit matches it.
TEST_F(RlsPlanner, DecidesLongValuesAndDeepDescriptorsInsteadOfRefusingThem) {
    RlsDescriptor deep;
    deep.entries.assign(17, RlsEntry{"ip", "v"});
    const std::string long_a = bounded_value(std::string(5000, 'a'));
    const std::string long_b = bounded_value(std::string(5000, 'a') + "b");
    auto p = run({deep, one("ip", long_a), one("ip", long_b), one("ip", "short")});
    ASSERT_TRUE(p) << p.error().detail;
    EXPECT_EQ(p->descriptors[0].kind, Kind::no_match);
    ASSERT_EQ(p->check.limits.size(), 3u) << "each value its own counter";
    EXPECT_NE(p->check.limits[0].windows[0].key, p->check.limits[1].windows[0].key);
    for (const auto& l : p->check.limits) EXPECT_LT(l.windows[0].key.size(), 256u) << "keys stay short";
}

// As envoyproxy/ratelimit: a domain no config names limits nothing (OK, no limit), but a
// malformed call to it is still refused.
TEST_F(RlsPlanner, AnUnknownDomainMatchesNothingUnderAFixedLabel) {
    auto p = run({one("ip", "1"), one("ip", "2")}, 0, "core");
    ASSERT_TRUE(p) << p.error().detail;
    EXPECT_TRUE(p->check.limits.empty());
    ASSERT_EQ(p->descriptors.size(), 2u);
    for (const auto& d : p->descriptors) {
        EXPECT_EQ(d.kind, RlsDescriptorPlan::Kind::no_match);
        EXPECT_EQ(d.label, unknown_domain_label);
    }
    EXPECT_EQ(refusal({one("", "1")}, 0, "core"), "invalid_request: descriptors[0].entries[0].key: expected a key, got an empty one");
}

TEST_F(RlsPlanner, ARegistryWithoutDomainsKnowsNoDomain) {
    reg = std::make_shared<const Registry>(
        parse_config("policies: {a: {algorithm: gcra, limit: 1, window: 1s}}\n", "r.yaml").registry);
    auto p = run({one("ip", "1")});
    ASSERT_TRUE(p) << p.error().detail;
    EXPECT_TRUE(p->check.limits.empty());
    EXPECT_EQ(p->descriptors.front().kind, RlsDescriptorPlan::Kind::no_match);
}

TEST_F(RlsPlanner, EachDescriptorReportsItsKind) {
    auto p = run({one("ip", "192.0.2.1"), one("ip", "10.0.0.1"), one("free", "x"), one("nothing", "x")});
    ASSERT_TRUE(p) << p.error().detail;
    ASSERT_EQ(p->descriptors.size(), 4u);
    EXPECT_EQ(p->descriptors[0].kind, Kind::limited);
    EXPECT_EQ(p->descriptors[0].label, "edge.ip");
    EXPECT_EQ(p->descriptors[0].requests_per_unit, 10u);
    EXPECT_EQ(p->descriptors[0].unit, RlsUnit::minute);
    EXPECT_EQ(p->descriptors[1].kind, Kind::no_match);  // allow-listed: a rule without a limit
    EXPECT_EQ(p->descriptors[1].label, "edge.ip_10.0.0.1");
    EXPECT_EQ(p->descriptors[2].kind, Kind::unlimited);
    EXPECT_EQ(p->descriptors[3].kind, Kind::no_match);
    EXPECT_EQ(p->descriptors[3].label, "edge");  // never the caller's key or value
    ASSERT_EQ(p->check.limits.size(), 1u);
    EXPECT_EQ(p->check.registry, reg);
}

TEST_F(RlsPlanner, KeysAreAlignedToTheUnitAsEnvoyproxyRatelimitCounts) {
    auto p = run({one("ip", "192.0.2.1")});
    ASSERT_TRUE(p);
    const auto& l = p->check.limits.at(0);
    // 12:34:56 lies in the minute that started at 12:34:00 (1764592440).
    EXPECT_EQ(l.windows.at(0).key, "rl:envoy/edge.ip:192%2E0%2E2%2E1:1764592440");
    EXPECT_EQ(p->descriptors[0].window_end_s, 1764592500);
    EXPECT_EQ(l.policy->algorithm, Algorithm::fixed_window);
    EXPECT_EQ(l.windows.at(0).limit, l.policy);
    auto next = plan(reg, RlsRequest{"edge", {one("ip", "192.0.2.1")}, 0}, noon + std::chrono::seconds(4));
    EXPECT_EQ(next->check.limits.at(0).windows.at(0).key, "rl:envoy/edge.ip:192%2E0%2E2%2E1:1764592500");
}

// envoyproxy/ratelimit's week: 7 days from the epoch (a Thursday), reported as WEEK (7).
TEST_F(RlsPlanner, AWeekIsSevenDaysAlignedToTheEpoch) {
    auto p = run({one("weekly", "w")});
    ASSERT_TRUE(p) << p.error().detail;
    EXPECT_EQ(p->descriptors[0].unit, RlsUnit::week);
    EXPECT_EQ(static_cast<int>(p->descriptors[0].unit), 7);
    // 2025-12-01 (a Monday) lies in the week that started on Thursday 2025-11-27 00:00 UTC.
    EXPECT_EQ(p->check.limits.at(0).windows.at(0).key, "rl:envoy/edge.weekly:w:1764201600");
    EXPECT_EQ(p->descriptors[0].window_end_s, 1764201600 + 7 * 86400);
    EXPECT_EQ(p->check.limits.at(0).policy->window, std::chrono::seconds(7 * 86400));
}

// envoyproxy/ratelimit's TestConfigLimitOverride, and the rest of its GetLimit: a limit the
// descriptor sends decides it, whatever rule it matches (a limit, unlimited, none, replaced).
TEST_F(RlsPlanner, ADescriptorsOwnLimitDecidesItWhateverTheConfigSays) {
    const auto with_limit = [](RlsDescriptor d, std::uint32_t per_unit, RlsUnit unit) {
        d.limit = RlsLimitOverride{per_unit, static_cast<std::uint32_t>(unit)};
        return d;
    };
    for (const auto& d : {one("ip", "192.0.2.1"), one("free", "x"), one("nothing", "x"), one("ip", "10.0.0.1")}) {
        auto p = run({with_limit(d, 10, RlsUnit::day)});
        ASSERT_TRUE(p) << p.error().detail;
        const auto& dp = p->descriptors.at(0);
        EXPECT_EQ(dp.kind, Kind::limited) << d.entries[0].key;
        EXPECT_EQ(dp.requests_per_unit, 10u);
        EXPECT_EQ(dp.unit, RlsUnit::day);
        EXPECT_EQ(dp.name, "");
        EXPECT_EQ(dp.label, "edge (limit override)");
        const auto& l = p->check.limits.at(0);
        EXPECT_EQ(l.policy->limit, 10);
        EXPECT_EQ(l.policy->window, std::chrono::hours(24));
        EXPECT_FALSE(l.shadow());
        // Counted per domain, keys and values, aligned to the unit: 2025-12-01 00:00 UTC.
        EXPECT_EQ(l.windows.at(0).key, "rl:envoy/edge.%o:" + d.entries[0].key + "." +
                                           (d.entries[0].key == "ip" ? d.entries[0].value == "10.0.0.1"
                                                                             ? std::string("10%2E0%2E0%2E1")
                                                                             : std::string("192%2E0%2E2%2E1")
                                                                     : std::string("x")) +
                                           ":1764547200");
    }
    // Another limit sent for the same descriptor counts on the same counter, as there.
    auto a = run({with_limit(one("ip", "a"), 10, RlsUnit::hour)});
    auto b = run({with_limit(one("ip", "a"), 42, RlsUnit::hour)});
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->check.limits[0].windows[0].key, b->check.limits[0].windows[0].key);
    EXPECT_EQ(b->descriptors[0].requests_per_unit, 42u);
    // A sent limit neither replaces nor is replaced: /login keeps its own beside it.
    auto kept = run({one("path", "/login"), with_limit(one("path", "/admin"), 5, RlsUnit::minute)});
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->descriptors[0].kind, Kind::limited);
    EXPECT_EQ(kept->descriptors[0].name, "login");
    // An unknown domain still limits nothing, as there.
    auto none = run({with_limit(one("ip", "a"), 10, RlsUnit::day)}, 0, "core");
    ASSERT_TRUE(none);
    EXPECT_EQ(none->descriptors[0].kind, Kind::no_match);
}

TEST_F(RlsPlanner, ASentLimitWithAnUnknownUnitIsRefusedNamingTheFieldAnyCountIsALimit) {
    RlsDescriptor d = one("ip", "a");
    d.limit = RlsLimitOverride{10, 0};
    EXPECT_EQ(refusal({one("ip", "b"), d}), "invalid_request: descriptors[1].limit.unit: expected 1 (SECOND) .. 7 (WEEK), got 0");
    d.limit = RlsLimitOverride{10, 8};
    EXPECT_EQ(refusal({d}), "invalid_request: descriptors[0].limit.unit: expected 1 (SECOND) .. 7 (WEEK), got 8");
    d.limit = RlsLimitOverride{4'000'000'000u, 1};
    EXPECT_EQ(refusal({d}), "planned") << "any uint32, as envoyproxy/ratelimit takes it";
    d.limit = RlsLimitOverride{std::numeric_limits<std::uint32_t>::max(), 2};
    auto most = run({d});
    ASSERT_TRUE(most) << most.error().detail;
    EXPECT_EQ(most->descriptors[0].requests_per_unit, std::numeric_limits<std::uint32_t>::max());
    EXPECT_FALSE(most->never_admitted);
    d.limit = RlsLimitOverride{0, 7};
    EXPECT_EQ(refusal({d}), "planned") << "0 blocks, as a rule of 0 does";
}

TEST_F(RlsPlanner, OtherAlgorithmsKeepOneKeyAndTheirFailureMode) {
    auto p = run({one("bucket", "b")});
    ASSERT_TRUE(p);
    EXPECT_EQ(p->check.limits.at(0).windows.at(0).key, "rl:envoy/edge.bucket:b");
    EXPECT_EQ(p->descriptors[0].window_end_s, 0);
    EXPECT_TRUE(p->check.limits.at(0).fail_closed());
}

TEST_F(RlsPlanner, ValuesAreEscapedSoNoByteReachesAKeyRaw) {
    auto p = run({one("ip", std::string("a\x01{x}:%. _\n", 11))});
    ASSERT_TRUE(p);
    EXPECT_EQ(p->check.limits.at(0).windows.at(0).key, "rl:envoy/edge.ip:a%01%7Bx%7D%3A%25%2E%20%5F%0A:1764592440");
}

TEST_F(RlsPlanner, LongValuesAreHashedAndStayDistinct) {
    auto a = run({one("ip", std::string(300, 'a'))});
    auto b = run({one("ip", std::string(299, 'a') + "b")});
    ASSERT_TRUE(a && b);
    const std::string& ka = a->check.limits.at(0).windows.at(0).key;
    const std::string& kb = b->check.limits.at(0).windows.at(0).key;
    EXPECT_EQ(ka.rfind("rl:envoy/edge.ip:%h", 0), 0u) << ka;
    EXPECT_EQ(ka.size(), std::string("rl:envoy/edge.ip:%h").size() + 64 + 11);
    EXPECT_NE(ka, kb);
}

TEST_F(RlsPlanner, EachValueOfAKeyOnlyRuleCountsApart) {
    auto p = run({one("ip", "192.0.2.1"), one("ip", "192.0.2.2")});
    ASSERT_TRUE(p);
    ASSERT_EQ(p->check.limits.size(), 2u);
    EXPECT_NE(p->check.limits[0].windows[0].key, p->check.limits[1].windows[0].key);
}

TEST_F(RlsPlanner, DescriptorsOnOneKeyBecomeOneLimitWithTheSummedCost) {
    auto p = run({one("ip", "192.0.2.1", 2), one("free", "x"), one("ip", "192.0.2.1", 3)}, 1);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->check.limits.size(), 1u);
    EXPECT_EQ(p->check.limits[0].cost, 5u);
    EXPECT_EQ(p->descriptors[0].limit, 0u);
    EXPECT_EQ(p->descriptors[2].limit, 0u);
}

TEST_F(RlsPlanner, HitsAddendIsTheCost) {
    auto p = run({one("ip", "a"), one("ip", "b", 4), one("ip", "c", 0)});
    ASSERT_TRUE(p);
    EXPECT_EQ(p->check.cost, 1u);  // 0 on the request means 1
    EXPECT_EQ(p->check.limits[0].cost, 1u);
    EXPECT_EQ(p->check.limits[1].cost, 4u);
    // 0 on a descriptor asks without charging (as envoyproxy/ratelimit reads it).
    EXPECT_EQ(p->check.limits[2].cost, 0u);
    EXPECT_TRUE(p->check.limits[2].check_only);
    EXPECT_FALSE(p->check.limits[0].check_only);
    EXPECT_FALSE(p->check.limits[1].check_only);
    auto q = run({one("ip", "a"), one("ip", "b", 2)}, 7);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->check.limits[0].cost, 7u);
    EXPECT_EQ(q->check.limits[1].cost, 2u);
}

TEST_F(RlsPlanner, ACheckOnlyDescriptorBesideAChargedOneOfTheSameKeyIsCharged) {
    auto p = run({one("ip", "a", 0), one("ip", "a", 2)});
    ASSERT_TRUE(p);
    ASSERT_EQ(p->check.limits.size(), 1u);
    EXPECT_EQ(p->check.limits[0].cost, 2u);
    EXPECT_FALSE(p->check.limits[0].check_only);
    auto q = run({one("ip", "a", 0), one("ip", "a", 0)}, 5);
    ASSERT_TRUE(q);
    EXPECT_TRUE(q->check.limits[0].check_only);
    EXPECT_FALSE(q->never_admitted);
}

// Issue 31: a cost a limit can never admit is a denial, never an error (Envoy passes errors).
TEST_F(RlsPlanner, ACostNoLimitCanAdmitIsADenialNotAnError) {
    const auto never = [this](std::vector<RlsDescriptor> ds, std::uint64_t hits = 0) {
        auto p = run(std::move(ds), hits);
        EXPECT_TRUE(p) << p.error().detail;
        return p ? p->never_admitted : false;
    };
    EXPECT_TRUE(never({one("ip", "a")}, 11));
    EXPECT_TRUE(never({one("ip", "a", 6), one("ip", "a", 5)})) << "summed over descriptors of one key";
    EXPECT_TRUE(never({one("ip", "a")}, 1'000'001));
    EXPECT_TRUE(never({one("ip", "a")}, UINT64_MAX));
    EXPECT_TRUE(never({one("ip", "a", 5'000'000'000)}));
    EXPECT_TRUE(never(std::vector<RlsDescriptor>(64, one("ip", "a"))));
    auto p = run({one("free", "x"), one("ip", "a", UINT64_MAX), one("ip", "b")});
    ASSERT_TRUE(p);
    EXPECT_FALSE(p->descriptors[0].never_admitted);
    EXPECT_TRUE(p->descriptors[1].never_admitted);
    EXPECT_FALSE(p->descriptors[2].never_admitted);
    EXPECT_LE(p->check.cost, 1'000'000u);
    EXPECT_FALSE(never({one("ip", "a")}, 10)) << "the whole limit can be admitted";
    // A cost on a descriptor no rule limits spends nothing: never a denial.
    EXPECT_FALSE(never({one("free", "a", 999'999)}));
    EXPECT_FALSE(never({one("free", "a")}, UINT64_MAX));
    // A blocking rule (requests_per_unit 0) is over its limit at any cost: the store says so.
    EXPECT_FALSE(never({one("ip", "50.0.0.5", 5)}));
    // A shadow limit never denies: it is charged the most it can admit.
    auto shadow = run({one("trial", "t", UINT64_MAX)});
    ASSERT_TRUE(shadow);
    EXPECT_FALSE(shadow->never_admitted);
    EXPECT_EQ(shadow->check.limits[0].cost, 2u);
}

TEST_F(RlsPlanner, ALimitNamedByAnotherMatchedLimitsReplacesIsDropped) {
    auto alone = run({one("path", "/login")});
    ASSERT_TRUE(alone);
    EXPECT_EQ(alone->descriptors[0].kind, Kind::limited);
    EXPECT_EQ(alone->descriptors[0].name, "login");
    auto both = run({one("path", "/login"), one("path", "/admin")});
    ASSERT_TRUE(both);
    EXPECT_EQ(both->descriptors[0].kind, Kind::no_match);
    EXPECT_EQ(both->descriptors[1].kind, Kind::limited);
    ASSERT_EQ(both->check.limits.size(), 1u);
    EXPECT_EQ(both->check.limits[0].policy->name, "edge.path_/admin");
}

TEST_F(RlsPlanner, ShadowModeMakesAShadowLimit) {
    auto p = run({one("trial", "t"), one("ip", "a")});
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->check.limits[0].shadow());
    EXPECT_FALSE(p->check.limits[1].shadow());
}

TEST_F(RlsPlanner, DetailedMetricAddsTheValueToItsOwnLabelOnly) {
    auto p = run({one("user", "u.1"), one("ip", "a")});
    ASSERT_TRUE(p);
    EXPECT_EQ(p->descriptors[0].label, "edge.user");
    EXPECT_EQ(p->descriptors[0].detailed_label, "edge.user_u.1");
    EXPECT_EQ(p->descriptors[1].detailed_label, "");
}

// envoy_key_layout: envoyproxy-ratelimit: its keys, written here from its published
// cache_key.go (prefix + domain + "_" + key "_" value "_" ... + now / unit * unit).
class ErlLayout : public RlsPlanner {
protected:
    EnvoyKeys keys{.erl = true, .prefix = "pfx_", .jitter = std::chrono::seconds(30)};
    result<RlsPlan> erl(std::vector<RlsDescriptor> ds, std::uint64_t hits = 0) const {
        return plan(reg, RlsRequest{"edge", std::move(ds), hits}, keys, noon);
    }
};

TEST_F(ErlLayout, KeysAreEnvoyproxyRatelimitsOwn) {
    // A descriptor's own limit (unit MONTH) over two entries: every entry goes in the key.
    RlsDescriptor two{{RlsEntry{"any", "x"}, RlsEntry{"path", "/a_b"}}, std::nullopt, RlsLimitOverride{7, 5}};
    auto p = erl({one("ip", "1.2.3.4"), one("weekly", "w"), one("bucket", "b"), two,
                  RlsDescriptor{{RlsEntry{"any", "x"}}, std::nullopt, RlsLimitOverride{7, 5}}});
    ASSERT_TRUE(p);
    const std::int64_t now = 1764592496;
    EXPECT_EQ(p->check.limits[0].windows.front().key, "pfx_edge_ip_1.2.3.4_" + std::to_string(now / 60 * 60));
    EXPECT_EQ(p->check.limits[1].windows.front().key, "pfx_edge_weekly_w_" + std::to_string(now / 604800 * 604800));
    // Not aligned (token_bucket): ratelimitd's own key and accounting.
    EXPECT_EQ(p->check.limits[2].windows.front().key.rfind("rl:envoy/", 0), 0u);
    EXPECT_EQ(p->check.limits[2].policy->algorithm, Algorithm::token_bucket);
    // Values as sent ("_" and "/" too), a month of 30 days from the epoch (its UnitToDivider).
    EXPECT_EQ(p->check.limits[3].windows.front().key,
              "pfx_edge_any_x_path_/a_b_" + std::to_string(now / 2592000 * 2592000));
    EXPECT_EQ(p->check.limits[4].windows.front().key, "pfx_edge_any_x_" + std::to_string(now / 2592000 * 2592000));
    EXPECT_EQ(p->descriptors[4].window_end_s, now / 2592000 * 2592000 + 2592000);
    const Policy& erl_policy = *p->check.limits[0].policy;
    EXPECT_EQ(erl_policy.algorithm, Algorithm::erl_fixed_window);
    EXPECT_EQ(erl_policy.limit, 10);
    EXPECT_EQ(erl_policy.window, std::chrono::seconds(60));
    EXPECT_EQ(erl_policy.expiration_jitter, std::chrono::seconds(30));
    EXPECT_TRUE(p->check.single_call);
}

TEST_F(ErlLayout, ACostPastTheLimitIsChargedNotNeverAdmitted) {
    auto p = erl({one("ip", "a", 5000000000ull), one("ip", "b", 0)});
    ASSERT_TRUE(p);
    EXPECT_FALSE(p->never_admitted);
    EXPECT_EQ(p->check.limits[0].cost, 4294967295u);
    EXPECT_EQ(p->check.limits[1].cost, 0u);
    EXPECT_TRUE(p->check.limits[1].check_only);
    // envoy_denied_calls: refuse (the default): envoyproxy/ratelimit's fit test, not an ask.
    EXPECT_EQ(p->check.limits[0].part, Part::decide);
    EXPECT_EQ(p->check.limits[1].part, Part::decide);
}

TEST_F(ErlLayout, ChargeMakesEveryLimitChargedWhateverTheOthers) {
    reg = std::make_shared<const Registry>(parse_config(std::string("envoy_denied_calls: charge\n") + planner_rules, "r.yaml").registry);
    auto p = erl({one("ip", "a", 0), one("trial", "t"), one("bucket", "b", 0)});
    ASSERT_TRUE(p);
    EXPECT_EQ(p->check.limits[0].part, Part::charge);
    EXPECT_EQ(p->check.limits[1].part, Part::charge);
    EXPECT_TRUE(p->check.limits[1].shadow());
    EXPECT_EQ(p->check.limits[2].part, Part::ask) << "ratelimitd's own limit keeps its accounting";
}

TEST_F(RlsPlanner, TheDefaultLayoutAsksCheckOnlyLimitsInTheSameCall) {
    auto p = run({one("ip", "a", 0), one("ip", "b")});
    ASSERT_TRUE(p);
    EXPECT_EQ(p->check.limits[0].part, Part::ask);
    EXPECT_EQ(p->check.limits[1].part, Part::decide);
    EXPECT_FALSE(p->check.single_call);
}

}  // namespace
