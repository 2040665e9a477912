// policy::plan: one request and one registry snapshot in, the limits with their tenants,
// plans, overrides, scope, cost and keys out; every client mistake named, in order.
#include "ratelimitd/policy/planner.hpp"

#include "ratelimitd/policy/registry_loader.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::policy {
namespace {

constexpr const char* registry_yaml = R"(
default_policy: api
policies:
  api:    { algorithm: token_bucket, limit: 10, window: 1m, burst: 20 }
  login:  { algorithm: fixed_window, limit: 5, window: 1m, on_store_error: deny }
  trial:  { algorithm: fixed_window, limit: 3, window: 1m, shadow: true }
  tiered:
    algorithm: fixed_window
    windows: [ { limit: 100, window: 1m }, { limit: 1000, window: 1d } ]
plans:
  pro:
    api: { limit: 600, window: 1m, burst: 1200 }
    tiered:
      windows: [ { limit: 1000, window: 1m }, { limit: 50000, window: 1d } ]
  free:
    api: { limit: 2, window: 1m, burst: 2 }
tenants:
  t_pro: { plan: pro }
  t_own:
    plan: pro
    overrides:
      api: { limit: 7, window: 1s, burst: 7 }
identity:
  - { name: api_key, header: X-Api-Key }
  - { client_ip: true }
routes:
  - { method: POST, path: /login, policy: login, scope: POST_login }
  - { path: /health, policy: none }
  - path: /layered
    scope: layered
    limits:
      - { policy: api, identity: api_key }
      - { policy: login, identity: client_ip }
  - path: /shadowed
    limits: [ { policy: api }, { policy: trial } ]
)";

std::shared_ptr<const Registry> registry() {
    static const auto reg = std::make_shared<const Registry>(parse_config(registry_yaml, "planner.yaml").registry);
    return reg;
}

check::CheckRequest named(std::string policy, std::string tenant = "t1") {
    check::CheckRequest req;
    req.policy = std::move(policy);
    req.tenant = std::move(tenant);
    return req;
}

check::CheckRequest routed(std::string method, std::string path, std::string tenant = "t1") {
    check::CheckRequest req;
    req.method = std::move(method);
    req.path = std::move(path);
    req.tenant = std::move(tenant);
    return req;
}

/// "policy@plan/tenant=key|key" per limit, ';' between limits.
std::string summary(const CheckPlan& plan) {
    std::string out;
    for (const auto& l : plan.limits) {
        if (!out.empty()) out += ';';
        out += l.policy->name + "@" + l.policy->plan + "/" + l.tenant.str() + "=";
        for (std::size_t i = 0; i < l.windows.size(); ++i) out += (i ? "|" : "") + l.windows[i].key;
    }
    return out;
}

CheckPlan planned(const check::CheckRequest& req) {
    auto p = plan(registry(), req);
    EXPECT_TRUE(p) << (p ? "" : p.error().detail);
    return p ? std::move(*p) : CheckPlan{};
}

TEST(Planner, ANamedPolicyIsOneLimitWithItsKeyScopeAndCost) {
    auto req = named("api");
    req.cost = 4;
    req.scope = "orders";
    const CheckPlan p = planned(req);
    EXPECT_EQ(summary(p), "api@/t1=rl:api:t1:orders");
    EXPECT_EQ(p.scope, "orders");
    EXPECT_EQ(p.cost, 4u);
    EXPECT_EQ(p.tenant, "t1");
    EXPECT_EQ(p.registry, registry());  // the snapshot is kept alive with the plan
    EXPECT_FALSE(p.limits[0].shadow());
    EXPECT_FALSE(p.limits[0].fail_closed());
}

TEST(Planner, PlansAndOverridesGiveTheTenantsOwnLimitsAndKeys) {
    const std::map<std::string, std::string> want = {
        {"t1", "api@/t1=rl:api:t1:global"},                        // no plan: the policy itself
        {"t_pro", "api@pro/t_pro=rl:api@pro:t_pro:global"},        // the registry's plan
        {"t_own", "api@tenant/t_own=rl:api@tenant:t_own:global"},  // the override beats the plan
    };
    for (const auto& [tenant, expected] : want) EXPECT_EQ(summary(planned(named("api", tenant))), expected);
    EXPECT_EQ(planned(named("api", "t_pro")).limits[0].policy->limit, 600);

    auto asked = named("api", "t1");
    asked.plan = "free";  // the caller's plan for this tenant
    EXPECT_EQ(summary(planned(asked)), "api@free/t1=rl:api@free:t1:global");
    asked.tenant = "t_own";  // an override still wins over a requested plan
    EXPECT_EQ(summary(planned(asked)), "api@tenant/t_own=rl:api@tenant:t_own:global");
    asked = named("login", "t1");
    asked.plan = "pro";  // a plan that does not list the policy keeps the policy's own
    EXPECT_EQ(summary(planned(asked)), "login@/t1=rl:login:t1:global");
}

TEST(Planner, AMultiWindowPolicyHasOneHashTaggedKeyPerWindowUnderItsPlan) {
    EXPECT_EQ(summary(planned(named("tiered"))), "tiered@/t1=rl:tiered:{t1:global}:1m|rl:tiered:{t1:global}:1d");
    const CheckPlan pro = planned(named("tiered", "t_pro"));
    EXPECT_EQ(summary(pro), "tiered@pro/t_pro=rl:tiered@pro:{t_pro:global}:1m|rl:tiered@pro:{t_pro:global}:1d");
    EXPECT_EQ(pro.limits[0].windows[1].limit->limit, 50000);
}

TEST(Planner, RoutesGiveTheirPolicyScopeAndLayers) {
    const CheckPlan login = planned(routed("post", "/login"));
    EXPECT_EQ(summary(login), "login@/t1=rl:login:t1:POST_login");
    EXPECT_TRUE(login.limits[0].fail_closed());
    EXPECT_EQ(summary(planned(routed("GET", "/elsewhere"))), "api@/t1=rl:api:t1:global");  // default_policy
    // A layered route on /v1/check: every layer spends the request's tenant, under its plan.
    EXPECT_EQ(summary(planned(routed("GET", "/layered", "t_pro"))),
              "api@pro/t_pro=rl:api@pro:t_pro:layered;login@/t_pro=rl:login:t_pro:layered");
    const CheckPlan shadowed = planned(routed("GET", "/shadowed"));
    ASSERT_EQ(shadowed.limits.size(), 2u);
    EXPECT_FALSE(shadowed.limits[0].shadow());
    EXPECT_TRUE(shadowed.limits[1].shadow());
}

TEST(Planner, APolicyNoneRoutePlansNoLimitButKeepsTheTenantAndScope) {
    const CheckPlan p = planned(routed("GET", "/health"));
    EXPECT_TRUE(p.limits.empty());
    EXPECT_EQ(p.tenant, "t1");
    EXPECT_EQ(p.scope, "global");
}

TEST(Planner, ClientMistakesAreNamedInTheOrderTheyAreChecked) {
    struct Case {
        check::CheckRequest req;
        errc code;
        std::string detail_start;
    };
    auto bad_tenant_and_policy = named("nope", "has space");
    auto bad_scope = named("api");
    bad_scope.scope = "a:b";
    auto bad_plan_name = named("api");
    bad_plan_name.plan = "no way";
    auto undefined_plan = named("api");
    undefined_plan.plan = "gold";
    auto zero = named("api");
    zero.cost = 0;
    auto unknown_and_zero = named("nope");
    unknown_and_zero.cost = 0;
    auto too_costly = named("api");
    too_costly.cost = 21;  // burst 20
    auto too_costly_for_a_layer = routed("GET", "/layered");
    too_costly_for_a_layer.cost = 6;  // "login" admits 5 at most
    const Case cases[] = {
        {bad_tenant_and_policy, errc::invalid_request, "tenant: byte 4 (0x20) is not allowed"},
        {bad_scope, errc::invalid_request, "scope: byte 2 (0x3a ':') is not allowed"},
        {bad_plan_name, errc::invalid_request, "plan: expected 1..64 bytes"},
        {unknown_and_zero, errc::invalid_cost, "cost: 0 is outside 1..1000000"},
        {zero, errc::invalid_cost, "cost: 0 is outside 1..1000000"},
        {named("nope"), errc::unknown_policy, "policy: \"nope\" is not defined (known: api, login, tiered, trial)"},
        {undefined_plan, errc::unknown_plan, "plan: \"gold\" is not defined (known: free, pro)"},
        {too_costly, errc::invalid_cost, "cost: 21 is more than policy \"api\" can ever admit (20)"},
        {too_costly_for_a_layer, errc::invalid_cost, "cost: 6 is more than policy \"login\" can ever admit (5)"},
    };
    for (const auto& c : cases) {
        const auto p = plan(registry(), c.req);
        ASSERT_FALSE(p.has_value()) << c.detail_start;
        EXPECT_EQ(p.error().code, c.code) << p.error().detail;
        EXPECT_TRUE(p.error().detail.starts_with(c.detail_start)) << p.error().detail;
    }
}

TEST(Planner, ThePlanOfAStateNamesOneLimitAndRefusesPolicyNone) {
    auto costly = named("api");
    costly.cost = 21;  // peek and reset spend nothing: no cost ceiling
    const auto state = plan_state(registry(), costly);
    ASSERT_TRUE(state) << state.error().detail;
    EXPECT_EQ(summary(*state), "api@/t1=rl:api:t1:global");
    EXPECT_EQ(state->cost, 1u);
    const auto layered = plan_state(registry(), routed("GET", "/layered"));
    ASSERT_TRUE(layered);
    EXPECT_EQ(summary(*layered), "api@/t1=rl:api:t1:layered");  // the route's first policy
    const auto none = plan_state(registry(), routed("GET", "/health"));
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, errc::unknown_policy);
    EXPECT_EQ(none.error().detail, "policy: the request resolves to \"none\", which keeps no state");
}

/// An /v1/auth subrequest's identity: the headers given, the peer 192.0.2.9.
struct AuthInput {
    std::map<std::string, std::string> headers;
    IdentityInput input() const {
        IdentityInput in;
        in.headers = [this](std::string_view name) {
            HeaderList out;
            if (auto it = headers.find(std::string(name)); it != headers.end()) out.emplace_back(it->second);
            return out;
        };
        in.peer = "192.0.2.9";
        return in;
    }
};

CheckPlan planned_auth(std::string_view method, std::string_view uri, const AuthInput& who) {
    const IdentityInput in = who.input();
    auto p = plan(registry(), AuthRequest{method, uri, in, "secret"});
    EXPECT_TRUE(p) << (p ? "" : p.error().detail);
    return p ? std::move(*p) : CheckPlan{};
}

TEST(Planner, AnAuthRouteGivesEachLimitTheTenantItsIdentityNames) {
    const AuthInput alice{{{"X-Api-Key", "alice"}}};
    const CheckPlan layered = planned_auth("GET", "/layered?x=1", alice);
    EXPECT_EQ(summary(layered), "api@/alice=rl:api:alice:layered;login@/ip:192.0.2.9=rl:login:ip:192.0.2.9:layered");
    EXPECT_EQ(layered.cost, 1u);
    EXPECT_EQ(layered.tenant, "");  // /v1/auth names no tenant of its own
    const AuthInput pro{{{"X-Api-Key", "t_pro"}}};
    EXPECT_EQ(summary(planned_auth("GET", "/elsewhere", pro)), "api@pro/t_pro=rl:api@pro:t_pro:global");
    EXPECT_EQ(summary(planned_auth("post", "/%6cogin", alice)), "login@/alice=rl:login:alice:POST_login");
    EXPECT_TRUE(planned_auth("GET", "/health", alice).limits.empty());
}

TEST(Planner, AnAuthRequestNoRouteMatchesIsMarkedUnmatchedOnlyWithoutADefaultPolicy) {
    const AuthInput alice{{{"X-Api-Key", "alice"}}};
    // A default_policy limits it, and a `policy: none` route says it is meant to be unlimited.
    EXPECT_FALSE(planned_auth("GET", "/elsewhere", alice).unmatched);
    EXPECT_FALSE(planned_auth("GET", "/health", alice).unmatched);
    EXPECT_FALSE(planned_auth("GET", "/layered", alice).unmatched);

    const auto bare = std::make_shared<const Registry>(parse_config(R"(
policies:
  api: { algorithm: fixed_window, limit: 5, window: 1m }
routes:
  - { path: /api/*, policy: api }
)", "bare.yaml").registry);
    const IdentityInput in = alice.input();
    const auto elsewhere = plan(bare, AuthRequest{"GET", "/elsewhere", in, "secret"});
    ASSERT_TRUE(elsewhere) << elsewhere.error().detail;
    EXPECT_TRUE(elsewhere->unmatched);
    EXPECT_TRUE(elsewhere->limits.empty());
    const auto api = plan(bare, AuthRequest{"GET", "/api/x", in, "secret"});
    ASSERT_TRUE(api) << api.error().detail;
    EXPECT_FALSE(api->unmatched);
    EXPECT_EQ(api->limits.size(), 1u);
}

}  // namespace
}  // namespace ratelimitd::policy
