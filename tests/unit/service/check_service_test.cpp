// CheckService's decisions against a scripted store: policy flags x store outcome ->
// decision and counters, with no socket and no Redis.
#include "ratelimitd/service/check_service.hpp"

#include "ratelimitd/policy/planner.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "support/metrics_text.hpp"
#include "support/run_on_io.hpp"
#include "support/scripted_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
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
  trial_closed: { algorithm: fixed_window, limit: 3, window: 1m, shadow: true, on_store_error: deny }
  open2:  { algorithm: sliding_window, limit: 8, window: 1m, on_store_error: allow }
  multi:
    algorithm: fixed_window
    windows: [ { limit: 2, window: 1s }, { limit: 4, window: 1m } ]
  monthly: { algorithm: fixed_window, limit: 100, window: 1mo, align: calendar, long_ttl: true }
routes:
  - { path: /free, policy: none }
  - path: /layered
    limits: [ { policy: open }, { policy: closed } ]
  - path: /shadowed
    limits: [ { policy: open }, { policy: trial } ]
  - path: /open-layers
    limits: [ { policy: open }, { policy: open2 } ]
  - path: /closed-shadowed
    limits: [ { policy: closed }, { policy: trial } ]
  - path: /shadow-says-deny
    limits: [ { policy: open }, { policy: trial_closed } ]
  - path: /only-shadows
    limits: [ { policy: trial }, { policy: trial_closed } ]
)";

class CheckServiceTest : public ::testing::Test {
protected:
    CheckServiceTest()
        : registry_(std::make_shared<const policy::Registry>(
              policy::parse_config(registry_yaml, "service_test.yaml").registry)),
          service_(registry_, store_, metrics_) {}

    /// What /v1/check does with a parsed request: plan it on the registry in force, decide.
    result<Decision> check(const check::CheckRequest& req) {
        auto plan = policy::plan(registry_.current(), req);
        if (!plan) return plan.error();
        return test::run_on_io(service_.decide(std::move(*plan)));
    }

    /// What /v1/peek and /v1/reset do with a parsed request (road::Ask::peek, Ask::reset): the
    /// key a check would use, planned on the registry in force, then the service's peek or reset.
    result<Decision> peek_state(const check::CheckRequest& req) {
        auto target = policy::plan_state(registry_.current(), req);
        if (!target) return target.error();
        return test::run_on_io(service_.peek(std::move(*target)));
    }
    result<bool> reset_state(const check::CheckRequest& req) {
        auto target = policy::plan_state(registry_.current(), req);
        if (!target) return target.error();
        return test::run_on_io(service_.reset(std::move(*target)));
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

namespace ratelimitd::service {
namespace {

constexpr const char* labels[] = {"allowed", "denied", "shadow_denied", "degraded_allowed", "failed_closed"};

/// One row of the layered table: a route, what the store answers to each call in turn, and
/// the decision, the number of store calls and every counter that moved ("policy:verdict").
struct LayeredRow {
    const char* path;
    std::vector<std::variant<Scripted, errc>> store;
    bool allowed;
    bool degraded;
    bool shadow_denied;
    std::size_t calls;
    std::vector<std::string> counted;
};

class LayeredDecisionTest : public CheckServiceTest {
protected:
    /// Every (policy, verdict) counter of the registry, 0 when never counted.
    std::map<std::string, double> counters() const {
        std::map<std::string, double> out;
        for (const auto& [name, policy] : registry_.current()->policies) {
            for (const char* label : labels) out[name + ":" + label] = std::max(0.0, counted(name, label));
        }
        return out;
    }
};

TEST_F(LayeredDecisionTest, FailureModesTimesShadowTimesLayersTimesStoreOutcome) {
    using S = Scripted;
    const errc down = errc::store_unavailable;
    const errc slow = errc::store_timeout;
    const LayeredRow rows[] = {
        // Enforced layers, one on_store_error: deny.
        {"/layered", {S::admit}, true, false, false, 1, {"open:allowed", "closed:allowed"}},
        {"/layered", {S::deny}, false, false, false, 1, {"open:denied", "closed:denied"}},
        {"/layered", {down}, false, true, false, 1, {"open:failed_closed", "closed:failed_closed"}},
        {"/layered", {slow}, false, true, false, 1, {"open:failed_closed", "closed:failed_closed"}},
        // Enforced layers that both fail open.
        {"/open-layers", {S::admit}, true, false, false, 1, {"open:allowed", "open2:allowed"}},
        {"/open-layers", {down}, true, true, false, 1, {"open:degraded_allowed", "open2:degraded_allowed"}},
        {"/open-layers", {slow}, true, true, false, 1, {"open:degraded_allowed", "open2:degraded_allowed"}},
        // An enforced layer and a shadow one: asked apart, the shadow one after an admit only.
        {"/shadowed", {S::admit, S::admit}, true, false, false, 2, {"open:allowed", "trial:allowed"}},
        {"/shadowed", {S::admit, S::deny}, true, false, true, 2, {"open:allowed", "trial:shadow_denied"}},
        {"/shadowed", {S::deny}, false, false, false, 1, {"open:denied"}},
        {"/shadowed", {down}, true, true, false, 1, {"open:degraded_allowed", "trial:degraded_allowed"}},
        {"/shadowed", {S::admit, slow}, true, false, false, 2, {"open:allowed"}},  // a shadow failure is no degradation
        {"/closed-shadowed", {down}, false, true, false, 1, {"closed:failed_closed", "trial:failed_closed"}},
        {"/closed-shadowed", {S::admit, S::deny}, true, false, true, 2, {"closed:allowed", "trial:shadow_denied"}},
        // A shadow layer's on_store_error: deny never closes: shadow limits never deny.
        {"/shadow-says-deny", {down}, true, true, false, 1,
         {"open:degraded_allowed", "trial_closed:degraded_allowed"}},
        {"/shadow-says-deny", {S::admit, down}, true, false, false, 2, {"open:allowed"}},
        {"/only-shadows", {S::deny}, true, false, true, 1, {"trial:shadow_denied", "trial_closed:shadow_denied"}},
        {"/only-shadows", {down}, true, true, false, 1,
         {"trial:degraded_allowed", "trial_closed:degraded_allowed"}},
    };
    for (const LayeredRow& row : rows) {
        SCOPED_TRACE(std::string(row.path) + " row " + std::to_string(&row - rows));
        for (const auto& outcome : row.store) std::visit([&](auto o) { store_.push(o); }, outcome);
        const auto before = counters();
        const std::size_t calls_before = store_.calls().size();

        auto d = check(routed(row.path));
        ASSERT_TRUE(d.has_value()) << d.error().detail;
        EXPECT_EQ(d->verdict.allowed, row.allowed);
        EXPECT_EQ(d->degraded, row.degraded);
        EXPECT_EQ(d->shadow_denied, row.shadow_denied);
        EXPECT_TRUE(d->limited);
        EXPECT_EQ(d->tenant, "t1");
        if (row.degraded) {
            EXPECT_EQ(d->store_error, std::get<errc>(row.store.back()));
        }
        EXPECT_EQ(store_.calls().size() - calls_before, row.calls);

        const auto after = counters();
        for (const auto& [series, value] : after) {
            const bool want = std::find(row.counted.begin(), row.counted.end(), series) != row.counted.end();
            EXPECT_EQ(value - before.at(series), want ? 1 : 0) << series;
        }
    }
}

TEST_F(CheckServiceTest, AShadowPolicyThatSaysDenyStillAllowsWhenTheStoreFails) {
    store_.push(errc::store_timeout);
    auto d = check(named("trial_closed"));
    ASSERT_TRUE(d.has_value());
    EXPECT_TRUE(d->verdict.allowed);
    EXPECT_TRUE(d->degraded);
    EXPECT_EQ(d->store_error, errc::store_timeout);
    EXPECT_EQ(counted("trial_closed", "degraded_allowed"), 1);
}

TEST_F(CheckServiceTest, ADecisionNamesEveryLayerAndTheStoreSeesEachLayersKeyAndCost) {
    auto req = routed("/open-layers");
    req.cost = 2;
    req.scope = "orders";
    auto d = check(req);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->policy, "open,open2");
    EXPECT_EQ(d->scope, "orders");
    ASSERT_EQ(store_.calls().size(), 1u);
    EXPECT_EQ(store_.calls()[0].keys, (std::vector<std::string>{"rl:open:t1:orders", "rl:open2:t1:orders"}));
    EXPECT_EQ(store_.calls()[0].costs, (std::vector<std::uint32_t>{2, 2}));
    EXPECT_EQ(d->verdict.windows.size(), 2u);
}

// A calendar window counts under its period's key (the script appends the period start):
// a reset forgets the current period's count, and the prefix denial caches know it by.
TEST_F(CheckServiceTest, ResetOfACalendarWindowForgetsTheCurrentPeriod) {
    store_.push(Scripted::admit);
    const auto before = std::chrono::system_clock::now();
    auto reset = reset_state(named("monthly"));
    ASSERT_TRUE(reset.has_value()) << reset.error().detail;
    ASSERT_EQ(store_.calls().size(), 2u);
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(before.time_since_epoch()).count();
    const auto month = calendar_period(CalendarUnit::month, 0, now_ms);
    EXPECT_EQ(store_.calls()[0].keys,
              std::vector<std::string>{"rl:monthly:{t1:global}:1mo@" + std::to_string(month.start_ms / 1000)});
    EXPECT_EQ(store_.calls()[1].keys, std::vector<std::string>{"rl:monthly:{t1:global}:1mo@"});
}

TEST_F(CheckServiceTest, PeekAndResetUseTheKeyAChecksWouldAndNeverApply) {
    auto peeked = peek_state(named("multi"));
    ASSERT_TRUE(peeked.has_value()) << peeked.error().detail;
    EXPECT_EQ(peeked->policy, "multi");
    EXPECT_EQ(peeked->verdict.windows.size(), 2u);
    store_.push(Scripted::admit);  // there was state to forget
    auto reset = reset_state(named("open"));
    ASSERT_TRUE(reset.has_value());
    EXPECT_TRUE(*reset);
    ASSERT_EQ(store_.calls().size(), 3u);  // two window peeks, one reset
    EXPECT_EQ(store_.calls()[0].kind, "peek");
    EXPECT_EQ(store_.calls()[1].kind, "peek");
    EXPECT_EQ(store_.calls()[1].keys, std::vector<std::string>{"rl:multi:{t1:global}:1m"});
    EXPECT_EQ(store_.calls()[2].kind, "reset");
    EXPECT_EQ(store_.calls()[2].keys, std::vector<std::string>{"rl:open:t1:global"});

    auto none = peek_state(routed("/free"));
    ASSERT_FALSE(none.has_value());
    EXPECT_EQ(none.error().code, errc::unknown_policy);
    EXPECT_EQ(store_.calls().size(), 3u);
}

}  // namespace
}  // namespace ratelimitd::service
