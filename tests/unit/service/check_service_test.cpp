// CheckService's decisions against a scripted store: policy flags x store outcome ->
// decision and counters, with no socket and no Redis.
#include "ratelimitd/service/check_service.hpp"

#include "ratelimitd/policy/planner.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "support/metrics_text.hpp"
#include "support/run_on_io.hpp"
#include "support/scripted_store.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <variant>

namespace ratelimitd::service {
namespace {

using test::Scripted;
using test::ScriptedStore;

constexpr const char* registry_yaml = R"(
policies:
  open:   { algorithm: token_bucket, limit: 10, window: 1m, on_store_error: allow }
  closed: { algorithm: fixed_window, limit: 5, window: 1m, on_store_error: deny }
  trial:  { algorithm: fixed_window, limit: 3, window: 1m, shadow: true }
  multi:
    algorithm: fixed_window
    windows: [ { limit: 2, window: 1s }, { limit: 4, window: 1m } ]
routes:
  - { path: /free, policy: none }
  - path: /layered
    limits: [ { policy: open }, { policy: closed } ]
  - path: /shadowed
    limits: [ { policy: open }, { policy: trial } ]
)";

class CheckServiceTest : public ::testing::Test {
protected:
    CheckServiceTest()
        : registry_(std::make_shared<const policy::Registry>(
              policy::parse_config(registry_yaml, "service_test.yaml").registry)),
          service_(registry_, store_, metrics_) {}

    /// What /v1/check does with a parsed request: plan it on the registry in force, decide.
    result<Decision> check(const check::CheckRequest& req) {
        auto plan = policy::plan(service_.registry(), req);
        if (!plan) return plan.error();
        return test::run_on_io(service_.decide(*plan));
    }

    static check::CheckRequest named(std::string policy, std::uint32_t cost = 1) {
        check::CheckRequest req;
        req.policy = std::move(policy);
        req.tenant = "t1";
        req.cost = cost;
        return req;
    }
    static check::CheckRequest routed(std::string path) {
        check::CheckRequest req;
        req.tenant = "t1";
        req.method = "GET";
        req.path = std::move(path);
        return req;
    }

    double counted(const std::string& policy, const std::string& verdict) const {
        return test::sample(metrics_.render("0", "scripted"),
                            "ratelimitd_checks_total{policy=\"" + policy + "\",verdict=\"" + verdict + "\"}");
    }

    policy::RegistryHandle registry_;
    ScriptedStore store_;
    Metrics metrics_;
    CheckService service_;
};

// One row: a policy, what the store does, and what the decision must be.
struct Row {
    const char* policy;
    std::variant<Scripted, errc> store;
    bool allowed;
    bool degraded;
    bool shadow_denied;
    const char* verdict;  // the ratelimitd_checks_total label counted once
};

TEST_F(CheckServiceTest, PolicyFlagsTimesStoreOutcomeGiveTheDecisionAndItsCounter) {
    const Row rows[] = {
        {"open", Scripted::admit, true, false, false, "allowed"},
        {"open", Scripted::deny, false, false, false, "denied"},
        {"open", errc::store_unavailable, true, true, false, "degraded_allowed"},
        {"open", errc::store_timeout, true, true, false, "degraded_allowed"},
        {"closed", Scripted::admit, true, false, false, "allowed"},
        {"closed", Scripted::deny, false, false, false, "denied"},
        {"closed", errc::store_unavailable, false, true, false, "failed_closed"},
        {"closed", errc::bad_script_reply, false, true, false, "failed_closed"},
        {"trial", Scripted::admit, true, false, false, "allowed"},
        {"trial", Scripted::deny, true, false, true, "shadow_denied"},
        {"trial", errc::store_timeout, true, true, false, "degraded_allowed"},
    };
    for (const Row& row : rows) {
        SCOPED_TRACE(std::string(row.policy) + " -> " + row.verdict);
        std::visit([&](auto outcome) { store_.push(outcome); }, row.store);
        const double before = counted(row.policy, row.verdict);
        auto d = check(named(row.policy));
        ASSERT_TRUE(d.has_value()) << d.error().detail;
        EXPECT_EQ(d->verdict.allowed, row.allowed);
        EXPECT_EQ(d->degraded, row.degraded);
        EXPECT_EQ(d->shadow_denied, row.shadow_denied);
        EXPECT_EQ(d->policy, row.policy);
        EXPECT_EQ(d->verdict.windows.empty(), row.degraded);  // degraded: no numbers are known
        EXPECT_EQ(counted(row.policy, row.verdict), std::max(0.0, before) + 1);
    }
}

TEST_F(CheckServiceTest, TheKeyAndCostReachTheStoreAsOneApply) {
    ASSERT_TRUE(check(named("open", 3)).has_value());
    ASSERT_EQ(store_.calls().size(), 1u);
    const auto& call = store_.calls()[0];
    EXPECT_EQ(call.kind, "apply");
    EXPECT_EQ(call.keys, std::vector<std::string>{"rl:open:t1:global"});
    EXPECT_EQ(call.costs, std::vector<std::uint32_t>{3});
}

TEST_F(CheckServiceTest, ClientMistakesNeverReachTheStore) {
    auto bad_tenant = named("open");
    bad_tenant.tenant = "has space";
    auto bad_scope = named("open");
    bad_scope.scope = "a:b";
    auto too_costly = named("closed", 6);  // more than a 5-per-window policy can ever admit
    const std::pair<check::CheckRequest, errc> cases[] = {
        {bad_tenant, errc::invalid_request},
        {bad_scope, errc::invalid_request},
        {named("nope"), errc::unknown_policy},
        {named("open", 0), errc::invalid_cost},
        {too_costly, errc::invalid_cost},
    };
    for (const auto& [req, want] : cases) {
        auto d = check(req);
        ASSERT_FALSE(d.has_value());
        EXPECT_EQ(d.error().code, want) << d.error().detail;
    }
    EXPECT_TRUE(store_.calls().empty());
}

TEST_F(CheckServiceTest, APolicyNoneRouteIsAllowedUnlimitedWithoutAStoreCall) {
    auto d = check(routed("/free"));
    ASSERT_TRUE(d.has_value());
    EXPECT_TRUE(d->verdict.allowed);
    EXPECT_FALSE(d->limited);
    EXPECT_EQ(d->tenant, "t1");
    EXPECT_TRUE(store_.calls().empty());
}

TEST_F(CheckServiceTest, AMultiWindowPolicyIsOneAtomicCallOverHashTaggedWindowKeys) {
    ASSERT_TRUE(check(named("multi")).has_value());
    ASSERT_EQ(store_.calls().size(), 1u);
    EXPECT_EQ(store_.calls()[0].kind, "apply_all");
    EXPECT_EQ(store_.calls()[0].keys,
              (std::vector<std::string>{"rl:multi:{t1:global}:1s", "rl:multi:{t1:global}:1m"}));
}

TEST_F(CheckServiceTest, ALayeredRouteIsDecidedInOneCallAndFailsClosedWhenAnyLimitSaysDeny) {
    auto allowed = check(routed("/layered"));
    ASSERT_TRUE(allowed.has_value());
    EXPECT_TRUE(allowed->verdict.allowed);
    EXPECT_EQ(allowed->policy, "open,closed");
    ASSERT_EQ(store_.calls().size(), 1u);
    EXPECT_EQ(store_.calls()[0].kind, "apply_all");
    EXPECT_EQ(store_.calls()[0].keys, (std::vector<std::string>{"rl:open:t1:global", "rl:closed:t1:global"}));

    store_.push(errc::store_unavailable);
    auto failed = check(routed("/layered"));
    ASSERT_TRUE(failed.has_value());
    EXPECT_TRUE(failed->degraded);
    EXPECT_FALSE(failed->verdict.allowed);  // "closed" says on_store_error: deny
    EXPECT_EQ(counted("open", "failed_closed"), 1);
    EXPECT_EQ(counted("closed", "failed_closed"), 1);
}

TEST_F(CheckServiceTest, AShadowLayerIsAskedOnlyAfterTheEnforcedOnesAdmittedAndNeverDenies) {
    store_.push(Scripted::admit);  // the enforced layer
    store_.push(Scripted::deny);   // the shadow layer
    auto d = check(routed("/shadowed"));
    ASSERT_TRUE(d.has_value());
    EXPECT_TRUE(d->verdict.allowed);
    EXPECT_TRUE(d->shadow_denied);
    ASSERT_EQ(store_.calls().size(), 2u);
    EXPECT_EQ(store_.calls()[0].policies, std::vector<std::string>{"open"});
    EXPECT_EQ(store_.calls()[1].policies, std::vector<std::string>{"trial"});

    store_.push(Scripted::deny);  // the enforced layer denies: the shadow one is not asked
    auto denied = check(routed("/shadowed"));
    ASSERT_TRUE(denied.has_value());
    EXPECT_FALSE(denied->verdict.allowed);
    EXPECT_EQ(store_.calls().size(), 3u);
}

}  // namespace
}  // namespace ratelimitd::service
