// resolve / match_route: which policy and scope a check applies to.
#include "ratelimitd/policy/resolve.hpp"

#include <gtest/gtest.h>

namespace {

using namespace ratelimitd::policy;
using ratelimitd::errc;
using ratelimitd::check::CheckRequest;

Policy make_policy(const std::string& name, Algorithm a, std::int64_t limit) {
    Policy p;
    p.name = name;
    p.algorithm = a;
    p.limit = limit;
    p.burst = limit;
    p.window = std::chrono::seconds(60);
    return p;
}

Route make_route(std::optional<std::string> method, std::string path, std::string policy,
                 std::optional<std::string> scope = std::nullopt) {
    // As the loader builds it: `policy: X` is one limit, "none" is none.
    std::vector<RouteLimit> limits;
    if (policy != no_policy) limits.push_back(RouteLimit{policy, std::nullopt});
    return Route{std::move(method), std::move(path), std::move(policy), std::move(scope), std::move(limits)};
}

/// The example registry of docs/configuration.md.
Registry contract_registry() {
    Registry reg;
    for (auto p : {make_policy("api-default", Algorithm::token_bucket, 60),
                   make_policy("login", Algorithm::fixed_window, 5),
                   make_policy("exports", Algorithm::sliding_log, 10)}) {
        reg.policies.emplace(p.name, p);
    }
    reg.default_policy = "api-default";
    reg.routes = {make_route("POST", "/v1/exports", "exports", "POST_/v1/exports"),
                  make_route(std::nullopt, "/login", "login"),
                  make_route(std::nullopt, "/health", "none"),
                  make_route(std::nullopt, "/v1/*", "api-default")};
    return reg;
}

CheckRequest request(std::optional<std::string> policy,
                     std::optional<std::string> method = std::nullopt,
                     std::optional<std::string> path = std::nullopt,
                     std::optional<std::string> scope = std::nullopt) {
    CheckRequest r;
    r.policy = std::move(policy);
    r.tenant = "tenant_1";
    r.method = std::move(method);
    r.path = std::move(path);
    r.scope = std::move(scope);
    return r;
}

std::string policy_of(const Registry& reg, const CheckRequest& req) {
    const auto r = resolve(reg, req);
    if (!r) return "error: " + r.error().detail;
    return r->policy == nullptr ? "none" : r->policy->name;
}

TEST(Resolve, UsesTheRequestPolicyWithGlobalScope) {
    const Registry reg = contract_registry();
    const auto r = resolve(reg, request("login"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->policy, reg.find("login"));
    EXPECT_EQ(r->scope, "global");
}

TEST(Resolve, RequestScopeWins) {
    const Registry reg = contract_registry();
    EXPECT_EQ(resolve(reg, request("login", {}, {}, "signup"))->scope, "signup");
    EXPECT_EQ(resolve(reg, request(std::nullopt, "POST", "/v1/exports", "mine"))->scope, "mine");
}

TEST(Resolve, RequestPolicySkipsRoutes) {
    const Registry reg = contract_registry();
    const auto r = resolve(reg, request("login", "POST", "/v1/exports"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->policy->name, "login");
    EXPECT_EQ(r->scope, "global");  // the route's scope belongs to the route's policy
}

TEST(Resolve, UnknownPolicyListsTheKnownOnes) {
    const Registry reg = contract_registry();
    const auto r = resolve(reg, request("nope"));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::unknown_policy);
    EXPECT_EQ(r.error().detail,
              R"(policy: "nope" is not defined (known: api-default, exports, login))");
}

TEST(Resolve, UnknownPolicyNameIsEscapedAndShortened) {
    const Registry reg = contract_registry();
    EXPECT_EQ(resolve(reg, request(std::string("a\nb\"", 4))).error().detail,
              R"(policy: "a\x0ab\x22" is not defined (known: api-default, exports, login))");
    const std::string detail = resolve(reg, request(std::string(5000, 'x'))).error().detail;
    EXPECT_LT(detail.size(), 200u);
}

TEST(Resolve, RequestCannotNameNone) {
    const Registry reg = contract_registry();
    const auto r = resolve(reg, request("none"));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::unknown_policy);
}

TEST(Resolve, RouteGivesPolicyAndScope) {
    const Registry reg = contract_registry();
    const auto r = resolve(reg, request(std::nullopt, "POST", "/v1/exports"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->policy->name, "exports");
    EXPECT_EQ(r->scope, "POST_/v1/exports");
}

TEST(Resolve, RouteWithoutScopeGivesGlobal) {
    const Registry reg = contract_registry();
    const auto r = resolve(reg, request(std::nullopt, "GET", "/login"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->policy->name, "login");
    EXPECT_EQ(r->scope, "global");
}

TEST(Resolve, FirstMatchingRouteWins) {
    const Registry reg = contract_registry();
    // POST /v1/exports also matches /v1/*, which comes later.
    EXPECT_EQ(policy_of(reg, request(std::nullopt, "POST", "/v1/exports")), "exports");
    EXPECT_EQ(policy_of(reg, request(std::nullopt, "GET", "/v1/exports")), "api-default");
}

TEST(Resolve, NoneRouteIsNotLimited) {
    const Registry reg = contract_registry();
    const auto r = resolve(reg, request(std::nullopt, "GET", "/health"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->policy, nullptr);
    EXPECT_EQ(r->scope, "global");
}

TEST(Resolve, RouteWithMethodNeedsAMethod) {
    const Registry reg = contract_registry();
    // No method: the POST-only route is skipped and /v1/* applies.
    EXPECT_EQ(policy_of(reg, request(std::nullopt, std::nullopt, "/v1/exports")), "api-default");
    EXPECT_EQ(policy_of(reg, request(std::nullopt, std::nullopt, "/login")), "login");
}

TEST(Resolve, MethodIsCaseInsensitive) {
    const Registry reg = contract_registry();
    EXPECT_EQ(policy_of(reg, request(std::nullopt, "post", "/v1/exports")), "exports");
}

TEST(Resolve, FallsBackToDefaultPolicy) {
    const Registry reg = contract_registry();
    EXPECT_EQ(policy_of(reg, request(std::nullopt, "GET", "/elsewhere")), "api-default");
    EXPECT_EQ(policy_of(reg, request(std::nullopt)), "api-default");
    EXPECT_EQ(resolve(reg, request(std::nullopt))->scope, "global");
}

TEST(Resolve, NothingNamesAPolicy) {
    Registry reg = contract_registry();
    reg.default_policy.reset();
    for (const auto& req : {request(std::nullopt), request(std::nullopt, "GET", "/elsewhere")}) {
        const auto r = resolve(reg, req);
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, errc::unknown_policy);
        EXPECT_EQ(r.error().detail,
                  "policy: not given, no route matches and no default_policy is set");
    }
}

TEST(Resolve, MissingDefaultPolicyIsUnknown) {
    Registry reg = contract_registry();
    reg.default_policy = "gone";  // a hand-built registry; the loader refuses this
    EXPECT_EQ(resolve(reg, request(std::nullopt)).error().code, errc::unknown_policy);
}

TEST(MatchRoute, ExactPathMatchesItselfWithOrWithoutATrailingSlash) {
    const Registry reg = contract_registry();
    EXPECT_EQ(match_route(reg, "GET", "/login"), &reg.routes[1]);
    EXPECT_EQ(match_route(reg, "GET", "/login/"), &reg.routes[1]);
    EXPECT_EQ(match_route(reg, "GET", "/loginx"), nullptr);
    EXPECT_EQ(match_route(reg, "GET", "/login/x"), nullptr);
    EXPECT_EQ(match_route(reg, "GET", "/Login"), nullptr);  // case-sensitive unless the route says so
}

TEST(MatchRoute, EverySpellingOfAPathMeetsItsRoute) {
    const Registry reg = contract_registry();
    for (const char* spelling : {"//login", "/login;jsessionid=x", "/%6Cogin", "/%6cogin", "/a/../login",
                                 "/./login", "/login/.", "/x/y/../../login", "/%2e%2e/login", "/..;/login",
                                 "/a%2F..%2Flogin", "http://h/login", "login", "/login?x=/v1/a",
                                 "/login;a/", "///login//"}) {
        EXPECT_EQ(match_route(reg, "GET", spelling), &reg.routes[1]) << spelling;
    }
    EXPECT_EQ(match_route(reg, "POST", "/v1//exports/"), &reg.routes[0]);
    EXPECT_EQ(match_route(reg, "POST", "/V1/exports"), nullptr);  // not case_insensitive
    EXPECT_EQ(match_route(reg, "GET", "/health/..%2Fv1/a"), &reg.routes[3]);
    EXPECT_EQ(match_route(reg, "GET", "/health/./"), &reg.routes[2]);
}

TEST(MatchRoute, ASpellingNeverTurnsALimitedPathIntoAnUnlimitedOne) {
    const Registry reg = contract_registry();
    // The normal form is /health (policy: none), but a backend that does not normalise serves
    // these under /v1/: the limited reading wins.
    for (const char* spelling : {"/v1/../health", "/v1/%2e%2e/health", "/v1%2F..%2Fhealth", "/%76%31/../health",
                                 "/v1/x/../../health"}) {
        EXPECT_EQ(match_route(reg, "GET", spelling), &reg.routes[3]) << spelling;
    }
    // Also when the normal form meets no route at all.
    EXPECT_EQ(match_route(reg, "GET", "/v1/../nothing"), &reg.routes[3]);
    // A normal form that is limited keeps its route.
    EXPECT_EQ(match_route(reg, "GET", "/v1/../login"), &reg.routes[1]);
}

TEST(MatchRoute, CaseInsensitiveRoutesFoldLettersOfPathAndPattern) {
    Registry reg = contract_registry();
    reg.routes[1].case_insensitive = true;
    reg.routes[3].case_insensitive = true;
    reg.routes[3].path = "/V1/*";
    for (const char* spelling : {"/LOGIN", "/Login/", "/%4Cogin", "/%6C%4FGIN", "//LoGiN;x"}) {
        EXPECT_EQ(match_route(reg, "GET", spelling), &reg.routes[1]) << spelling;
    }
    EXPECT_EQ(match_route(reg, "GET", "/v1/A"), &reg.routes[3]);
    EXPECT_EQ(match_route(reg, "GET", "/V1/a"), &reg.routes[3]);
    EXPECT_EQ(match_route(reg, "GET", "/HEALTH"), nullptr);  // only the routes that ask for it
    EXPECT_EQ(match_route(reg, "GET", "/loginx"), nullptr);
}

TEST(MatchRoute, ATrailingSlashRouteMatchesWithoutIt) {
    Registry reg;
    reg.routes = {make_route(std::nullopt, "/admin/", "none"), make_route(std::nullopt, "/", "none")};
    EXPECT_EQ(match_route(reg, "GET", "/admin"), &reg.routes[0]);
    EXPECT_EQ(match_route(reg, "GET", "/admin/"), &reg.routes[0]);
    EXPECT_EQ(match_route(reg, "GET", "/"), &reg.routes[1]);
    EXPECT_EQ(match_route(reg, "GET", ""), &reg.routes[1]);
    EXPECT_EQ(match_route(reg, "GET", "/x"), nullptr);
}

TEST(Resolve, CheckPathsAreNormalisedToo) {
    const Registry reg = contract_registry();
    CheckRequest req = request(std::nullopt);
    req.path = "/%6cogin;jsessionid=1";
    const auto r = resolve(reg, req);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->policy->name, "login");
}

TEST(MatchRoute, StarMakesAPrefixMatch) {
    const Registry reg = contract_registry();
    EXPECT_EQ(match_route(reg, "GET", "/v1/"), &reg.routes[3]);
    EXPECT_EQ(match_route(reg, "GET", "/v1/a/b/c"), &reg.routes[3]);
    EXPECT_EQ(match_route(reg, "GET", "/v1"), nullptr);
    EXPECT_EQ(match_route(reg, "GET", "/v2/x"), nullptr);
}

TEST(MatchRoute, IgnoresTheQueryString) {
    const Registry reg = contract_registry();
    EXPECT_EQ(match_route(reg, "GET", "/login?next=/home"), &reg.routes[1]);
    EXPECT_EQ(match_route(reg, "POST", "/v1/exports?x=1#top"), &reg.routes[0]);
}

TEST(MatchRoute, MethodMustMatchWhenTheRouteNamesOne) {
    const Registry reg = contract_registry();
    EXPECT_EQ(match_route(reg, "POST", "/v1/exports"), &reg.routes[0]);
    EXPECT_EQ(match_route(reg, "GET", "/v1/exports"), &reg.routes[3]);
    EXPECT_EQ(match_route(reg, "", "/v1/exports"), &reg.routes[3]);
}

TEST(MatchRoute, EmptyTableMatchesNothing) {
    Registry reg;
    EXPECT_EQ(match_route(reg, "GET", "/"), nullptr);
}

}  // namespace

namespace {

/// api-default (60) with plans free (10) and pro (600); tenant "t-free" on free, "t-own"
/// on pro with an override of 7.
Registry plans_registry() {
    Registry reg = contract_registry();
    auto variant = [](const std::string& label, std::int64_t limit) {
        Policy p = make_policy("api-default", Algorithm::token_bucket, limit);
        p.plan = label;
        return p;
    };
    reg.plans["free"].policies.emplace("api-default", variant("free", 10));
    reg.plans["pro"].policies.emplace("api-default", variant("pro", 600));
    reg.tenants["t-free"].plan = "free";
    reg.tenants["t-own"].plan = "pro";
    reg.tenants["t-own"].overrides.emplace("api-default", variant(tenant_override_label, 7));
    return reg;
}

std::int64_t limit_for(const Registry& reg, std::string_view policy, std::string_view tenant,
                       std::optional<std::string> plan = std::nullopt) {
    auto p = limits_for(reg, *reg.find(policy), tenant, plan);
    EXPECT_TRUE(p.has_value()) << p.error().detail;
    return p ? (*p)->limit : -1;
}

}  // namespace

TEST(LimitsFor, OverrideThenRequestedPlanThenTheTenantsPlanThenThePolicy) {
    const Registry reg = plans_registry();
    EXPECT_EQ(limit_for(reg, "api-default", "t-own", "free"), 7) << "an override wins over everything";
    EXPECT_EQ(limit_for(reg, "api-default", "t-free", "pro"), 600) << "the caller's plan wins over the map";
    EXPECT_EQ(limit_for(reg, "api-default", "t-free"), 10);
    EXPECT_EQ(limit_for(reg, "api-default", "nobody"), 60);
    EXPECT_EQ(limit_for(reg, "login", "t-free"), 5) << "a plan that does not list a policy leaves it alone";
    EXPECT_EQ((*limits_for(reg, *reg.find("api-default"), "t-free", std::nullopt))->key_name(), "api-default@free");
    EXPECT_EQ((*limits_for(reg, *reg.find("api-default"), "t-own", std::nullopt))->key_name(), "api-default@tenant");
}

TEST(LimitsFor, AnUnknownRequestedPlanNamesTheKnownOnes) {
    const Registry reg = plans_registry();
    auto p = limits_for(reg, *reg.find("api-default"), "nobody", std::string("gold"));
    ASSERT_FALSE(p.has_value());
    EXPECT_EQ(p.error().code, errc::unknown_plan);
    EXPECT_EQ(p.error().detail, R"(plan: "gold" is not defined (known: free, pro))");
}
