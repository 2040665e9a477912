// quota_mode, share_threshold and value_to_metric as envoyproxy/ratelimit reads and plans them
// (its config_impl.go, service/ratelimit.go, limiter/cache_key.go): read, and planned.
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/rls_plan.hpp"

#include "unit/policy/rls_noon.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using ratelimitd::test::refusal;

using ratelimitd::test::noon;

using namespace ratelimitd;
using namespace ratelimitd::policy;

const char* const quota_rules = R"(
domains:
  - domain: q
    descriptors:
      - {key: service, value: s1, quota_mode: true, rate_limit: {unit: minute, requests_per_unit: 1}}
      - {key: service, value: s2, quota_mode: true, value_to_metric: true,
         rate_limit: {unit: minute, requests_per_unit: 2}}
      - {key: plain, rate_limit: {unit: minute, requests_per_unit: 5}}
      - {key: files, value: "docs*", share_threshold: true, rate_limit: {unit: minute, requests_per_unit: 3}}
      - {key: files, value: "img*", rate_limit: {unit: minute, requests_per_unit: 3}}
      - key: tenant
        value: "t*"
        share_threshold: true
        descriptors:
          - {key: user, rate_limit: {unit: hour, requests_per_unit: 4}}
)";

constexpr std::int64_t minute_start = 1764592496 / 60 * 60;

class QuotaShare : public ::testing::Test {
protected:
    std::shared_ptr<const Registry> reg = std::make_shared<const Registry>(parse_config(quota_rules, "r.yaml").registry);

    static RlsDescriptor one(std::string key, std::string value) {
        return RlsDescriptor{{RlsEntry{std::move(key), std::move(value)}}, std::nullopt, {}};
    }
    result<RlsPlan> run(std::vector<RlsDescriptor> ds, EnvoyKeys keys = {}) const {
        return plan(reg, RlsRequest{"q", std::move(ds), 0}, keys, noon);
    }
};

TEST_F(QuotaShare, TheReaderKeepsEachFlag) {
    const auto& root = reg->domains->find("q")->root;
    EXPECT_TRUE(root.rules[0].quota_mode);
    EXPECT_FALSE(root.rules[0].value_to_metric);
    EXPECT_TRUE(root.rules[1].value_to_metric);
    EXPECT_FALSE(root.rules[2].quota_mode);
    EXPECT_TRUE(root.rules[3].share_threshold);
    EXPECT_FALSE(root.rules[4].share_threshold);
    EXPECT_TRUE(reg->domains->find("q")->shares_threshold);
    // quota_mode is not shadow_mode: the rule's own limit stays enforced in its answer.
    EXPECT_FALSE(root.rules[0].policy.shadow);
}

TEST_F(QuotaShare, ShareThresholdNeedsAWildcardAsEnvoyproxyRatelimitSays) {
    const std::string head = "domains:\n  - domain: d\n    descriptors:\n";
    EXPECT_EQ(refusal(head + "      - {key: k, value: v, share_threshold: true, rate_limit: {unit: second, "
                             "requests_per_unit: 1}}\n"),
              "r.yaml: domains[0].descriptors[0].share_threshold: only allowed with a wildcard value (one holding a "
              "'*'), key \"k\" has \"v\"");
    EXPECT_NE(refusal(head + "      - {key: k, share_threshold: true}\n").find("key \"k\" has none"),
              std::string::npos);
    EXPECT_EQ(refusal(head + "      - {key: k, value: 'a*', share_threshold: false, quota_mode: false, "
                             "value_to_metric: false, rate_limit: {unit: second, requests_per_unit: 1}}\n"),
              "");
}

TEST_F(QuotaShare, AQuotaRulesLimitIsQuotaAndNeverDeniesTheStoresVerdict) {
    auto p = run({one("service", "s1"), one("plain", "x"), one("service", "s2")});
    ASSERT_TRUE(p) << p.error().detail;
    ASSERT_EQ(p->check.limits.size(), 3u);
    EXPECT_TRUE(p->check.limits[0].quota);
    EXPECT_TRUE(p->check.limits[0].shadow()) << "the store's verdict never denies on a quota limit";
    EXPECT_FALSE(p->check.limits[0].policy->shadow);
    EXPECT_FALSE(p->check.limits[1].quota);
    EXPECT_TRUE(p->check.limits[2].quota);
}

TEST_F(QuotaShare, QuotaModeForAllMakesEveryLimitQuota) {
    EnvoyKeys all;
    all.quota_all = true;
    auto p = run({one("plain", "x"), RlsDescriptor{{RlsEntry{"any", "y"}}, std::nullopt, RlsLimitOverride{3, 2}}}, all);
    ASSERT_TRUE(p) << p.error().detail;
    EXPECT_TRUE(p->check.limits[0].quota);
    EXPECT_TRUE(p->check.limits[1].quota) << "a sent limit too, as QUOTA_MODE reads every limit";
}

TEST_F(QuotaShare, ShareThresholdValuesShareOneErlCounterOthersCountApart) {
    EnvoyKeys erl;
    erl.erl = true;
    auto p = run({one("files", "docs/a"), one("files", "docs/b"), one("files", "img/a"), one("files", "img/b")}, erl);
    ASSERT_TRUE(p) << p.error().detail;
    ASSERT_EQ(p->check.limits.size(), 3u) << "docs/a and docs/b share one counter";
    EXPECT_EQ(p->check.limits[0].windows.front().key, "q_files_docs*_" + std::to_string(minute_start));
    EXPECT_EQ(p->check.limits[0].cost, 2u);
    EXPECT_EQ(p->descriptors[1].limit, 0u);
    EXPECT_EQ(p->check.limits[1].windows.front().key, "q_files_img/a_" + std::to_string(minute_start));
}

TEST_F(QuotaShare, ShareThresholdOnAParentLevelKeysItsEntryByThePattern) {
    EnvoyKeys erl;
    erl.erl = true;
    RlsDescriptor a{{RlsEntry{"tenant", "t1"}, RlsEntry{"user", "u"}}, std::nullopt, {}};
    RlsDescriptor b{{RlsEntry{"tenant", "t2"}, RlsEntry{"user", "u"}}, std::nullopt, {}};
    auto p = run({a, b}, erl);
    ASSERT_TRUE(p) << p.error().detail;
    ASSERT_EQ(p->check.limits.size(), 1u);
    EXPECT_EQ(p->check.limits[0].windows.front().key, "q_tenant_t*_user_u_" + std::to_string(1764592496 / 3600 * 3600));
}

TEST_F(QuotaShare, ShareThresholdSharesRatelimitdsOwnKeysToo) {
    auto p = run({one("files", "docs/a"), one("files", "docs/b")});
    ASSERT_TRUE(p) << p.error().detail;
    EXPECT_EQ(p->check.limits.size(), 1u);
}

}  // namespace
