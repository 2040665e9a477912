// /v1/auth codec: original request from proxy headers, route and identity per limit, answers.
#include "ratelimitd/http/auth_codec.hpp"

#include "ratelimitd/road/hash_secret.hpp"
#include "ratelimitd/policy/planner.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::http {
namespace {

using road::effective_hash_secret;

Request make_request(bhttp::verb method, std::string target,
                     std::vector<std::pair<std::string, std::string>> headers = {}) {
    Request req{method, target, 11};
    for (auto& [name, value] : headers) req.insert(name, value);
    return req;
}

const policy::Registry& registry() {
    static const policy::Config config = policy::parse_config(R"(
default_policy: fallback
policies:
  fallback: { algorithm: token_bucket, limit: 100, window: 1m }
  login: { algorithm: fixed_window, limit: 5, window: 1m }
  per-key: { algorithm: token_bucket, limit: 10, window: 1s }
  per-ip: { algorithm: fixed_window, limit: 50, window: 1m }
identity:
  - { name: api_key, header: X-Api-Key, hash: true }
  - { client_ip: true }
trusted_proxies: [127.0.0.1/32]
routes:
  - { method: POST, path: /login, policy: login, scope: POST_login }
  - { path: /health, policy: none }
  - path: "/api/*"
    limits:
      - { policy: per-key, identity: api_key }
      - { policy: per-ip, identity: client_ip }
)",
                                                              "auth.yaml");
    return config.registry;
}

constexpr std::string_view secret = "a-test-secret-of-enough-bytes";

/// A registry the test keeps alive, as the snapshot the planner wants.
std::shared_ptr<const policy::Registry> snapshot(const policy::Registry& reg) {
    return std::shared_ptr<const policy::Registry>(std::shared_ptr<const policy::Registry>{}, &reg);
}

/// The limits /v1/auth plans for a request: the codec reads it, the planner plans it.
policy::CheckPlan plan_auth(const policy::Registry& reg, const AuthQuery& q, const policy::IdentityInput& in,
                            std::string_view hash_secret) {
    auto plan = policy::plan(snapshot(reg), policy::AuthRequest{q.method, q.uri, in, hash_secret});
    EXPECT_TRUE(plan) << (plan ? "" : plan.error().detail);
    return plan ? std::move(*plan) : policy::CheckPlan{};
}

policy::CheckPlan plan_for(const Request& req, std::string_view peer = "127.0.0.1") {
    const std::string_view target = req.target();
    const auto path = target.substr(0, target.find('?'));
    auto q = parse_auth_request(req, path);
    EXPECT_TRUE(q) << (q ? "" : q.error().detail);
    return plan_auth(registry(), *q, identity_input(req, peer), secret);
}

std::string names(const policy::CheckPlan& p) {
    std::string out;
    for (const auto& l : p.limits) out += (out.empty() ? "" : ",") + l.policy->name + "@" + l.tenant.str();
    return out;
}

//------------------------------------------------------------------------------
// The original request

TEST(ParseAuthRequest, NginxHeadersNameTheOriginalRequest) {
    const auto req = make_request(bhttp::verb::get, "/v1/auth?deny_status=403",
                                  {{"X-Original-Method", "POST"}, {"X-Original-URI", "/login?next=%2Fhome"}});
    const auto q = parse_auth_request(req, "/v1/auth");
    ASSERT_TRUE(q);
    EXPECT_EQ(q->method, "POST");
    EXPECT_EQ(q->uri, "/login?next=%2Fhome");
    EXPECT_EQ(q->deny_status, 403);
}

TEST(ParseAuthRequest, TraefikHeadersWhenNginxsAreAbsent) {
    const auto req = make_request(bhttp::verb::get, "/v1/auth",
                                  {{"X-Forwarded-Method", "DELETE"}, {"X-Forwarded-Uri", "/api/x"}});
    const auto q = parse_auth_request(req, "/v1/auth");
    ASSERT_TRUE(q);
    EXPECT_EQ(q->method, "DELETE");
    EXPECT_EQ(q->uri, "/api/x");
    EXPECT_EQ(q->deny_status, std::nullopt);
}

TEST(ParseAuthRequest, NginxHeadersWinOverTraefiks) {
    const auto req = make_request(bhttp::verb::get, "/v1/auth",
                                  {{"X-Forwarded-Uri", "/health"}, {"X-Original-URI", "/login"}});
    EXPECT_EQ(parse_auth_request(req, "/v1/auth")->uri, "/login");
}

TEST(ParseAuthRequest, EnvoyPathPrefixCarriesTheOriginalPathAndMethod) {
    const auto req = make_request(bhttp::verb::post, "/v1/auth/login?deny_status=500");
    const auto q = parse_auth_request(req, "/v1/auth/login");
    ASSERT_TRUE(q);
    EXPECT_EQ(q->method, "POST");
    EXPECT_EQ(q->uri, "/login?deny_status=500");
    EXPECT_EQ(q->deny_status, std::nullopt);  // the client's query, never read as ours
}

TEST(ParseAuthRequest, WithoutHeadersTheRequestItself) {
    const auto req = make_request(bhttp::verb::put, "/v1/auth");
    const auto q = parse_auth_request(req, "/v1/auth");
    EXPECT_EQ(q->method, "PUT");
    EXPECT_EQ(q->uri, "/v1/auth");
}

TEST(ParseAuthRequest, RepeatedOriginalHeadersAreRefused) {
    const auto req = make_request(bhttp::verb::get, "/v1/auth",
                                  {{"X-Original-URI", "/login"}, {"X-Original-URI", "/health"}});
    const auto q = parse_auth_request(req, "/v1/auth");
    ASSERT_FALSE(q);
    EXPECT_EQ(q.error().code, errc::invalid_request);
    EXPECT_EQ(q.error().detail, "X-Original-URI: given more than once");
}

TEST(ParseAuthRequest, DenyStatusMustBe400To599) {
    for (const char* ok : {"400", "429", "599"}) {
        const auto req = make_request(bhttp::verb::get, std::string("/v1/auth?a=1&deny_status=") + ok);
        EXPECT_EQ(parse_auth_request(req, "/v1/auth")->deny_status, std::stoi(ok));
    }
    for (const char* bad : {"200", "399", "600", "4030", "40", "", "abc", "403&deny_status=404"}) {
        const auto req = make_request(bhttp::verb::get, std::string("/v1/auth?deny_status=") + bad);
        const auto q = parse_auth_request(req, "/v1/auth");
        EXPECT_FALSE(q) << bad;
    }
    EXPECT_EQ(parse_auth_request(make_request(bhttp::verb::get, "/v1/auth?deny_status=2x\x01"), "/v1/auth")
                  .error()
                  .detail,
              "deny_status: expected an integer 400..599, got \"2x?\"");
}

TEST(IsAuthPath, OnlyTheEndpointAndBelowIt) {
    EXPECT_TRUE(is_auth_path("/v1/auth"));
    EXPECT_TRUE(is_auth_path("/v1/auth/api/x"));
    EXPECT_FALSE(is_auth_path("/v1/authz"));
    EXPECT_FALSE(is_auth_path("/v1/au"));
}

//------------------------------------------------------------------------------
// Routes and identities

TEST(PlanAuth, RouteMatchingIgnoresTheQueryOfTheOriginalUri) {
    const auto plan = plan_for(make_request(bhttp::verb::get, "/v1/auth",
                                            {{"X-Original-Method", "POST"}, {"X-Original-URI", "/login?x=/health"}}));
    EXPECT_EQ(names(plan), "login@ip:127.0.0.1");
    EXPECT_EQ(plan.scope, "POST_login");
}

TEST(PlanAuth, EncodedOrDottedPathsMatchTheRouteTheProxyServed) {
    for (const char* uri : {"/%6cogin", "//login", "/x/../login?a", "/./login"}) {
        const auto plan = plan_for(make_request(bhttp::verb::get, "/v1/auth",
                                                {{"X-Original-Method", "POST"}, {"X-Original-URI", uri}}));
        EXPECT_EQ(names(plan), "login@ip:127.0.0.1") << uri;
    }
}

TEST(PlanAuth, MethodComesFromTheOriginalRequest) {
    // GET /login matches no POST route: the default policy applies.
    const auto plan = plan_for(make_request(bhttp::verb::get, "/v1/auth",
                                            {{"X-Original-Method", "GET"}, {"X-Original-URI", "/login"}}));
    EXPECT_EQ(names(plan), "fallback@ip:127.0.0.1");
    EXPECT_EQ(plan.scope, "global");
}

TEST(PlanAuth, PolicyNoneIsNotLimited) {
    const auto plan = plan_for(make_request(bhttp::verb::get, "/v1/auth", {{"X-Original-URI", "/health?deep=1"}}));
    EXPECT_TRUE(plan.limits.empty());
}

TEST(PlanAuth, NoRouteAndNoDefaultPolicyIsNotLimited) {
    const auto reg = policy::parse_config("policies:\n  a: {algorithm: fixed_window, limit: 1, window: 1s}\n"
                                          "routes:\n  - {path: /a, policy: a}\n",
                                          "x.yaml")
                         .registry;
    const auto req = make_request(bhttp::verb::get, "/v1/auth", {{"X-Original-URI", "/b"}});
    const auto q = parse_auth_request(req, "/v1/auth");
    EXPECT_TRUE(plan_auth(reg, *q, identity_input(req, "1.2.3.4"), secret).limits.empty());
}

TEST(PlanAuth, LayeredRouteGivesEachLimitItsIdentity) {
    const auto plan = plan_for(
        make_request(bhttp::verb::get, "/v1/auth",
                     {{"X-Original-URI", "/api/orders?page=2"}, {"X-Api-Key", "sk_alice"}, {"X-Real-IP", "203.0.113.7"}}));
    EXPECT_EQ(names(plan), "per-key@" + policy::hash_identity(secret, "sk_alice").str() + ",per-ip@ip:203.0.113.7");
}

TEST(PlanAuth, ANamedIdentityThatIsMissingFallsBackToTheClientAddress) {
    const auto plan = plan_for(make_request(bhttp::verb::get, "/v1/auth", {{"X-Original-URI", "/api/orders"}}),
                               "198.51.100.4");
    EXPECT_EQ(names(plan), "per-key@ip:198.51.100.4,per-ip@ip:198.51.100.4");
}

TEST(PlanAuth, ForwardedAddressesFromAnUntrustedPeerAreIgnored) {
    const auto req = make_request(bhttp::verb::get, "/v1/auth",
                                  {{"X-Original-URI", "/other"}, {"X-Real-IP", "1.1.1.1"}, {"X-Forwarded-For", "2.2.2.2"}});
    EXPECT_EQ(names(plan_for(req, "192.0.2.50")), "fallback@ip:192.0.2.50");
    EXPECT_EQ(names(plan_for(req, "127.0.0.1")), "fallback@ip:1.1.1.1");  // a trusted proxy is believed
}

TEST(EffectiveHashSecret, EnvironmentThenFileThenPerProcess) {
    policy::Registry reg;
    const auto per_process = std::string(effective_hash_secret(std::nullopt, reg));
    EXPECT_EQ(per_process.size(), 32u);
    EXPECT_EQ(effective_hash_secret(std::nullopt, reg), per_process);  // made once
    reg.hash_secret = "from-the-config-file";
    EXPECT_EQ(effective_hash_secret(std::nullopt, reg), "from-the-config-file");
    EXPECT_EQ(effective_hash_secret(std::string("from-the-environment"), reg), "from-the-environment");
}

//------------------------------------------------------------------------------
// Answers

check::WindowState window(std::string policy, bool allowed, std::int64_t remaining, std::int64_t retry) {
    check::WindowState w;
    w.policy = std::move(policy);
    w.allowed = allowed;
    w.limit = 10;
    w.window_s = 60;
    w.remaining = remaining;
    w.reset_epoch_s = 1'800'000'000;
    w.reset_after_s = retry == 0 ? 5 : retry;
    w.retry_after_s = retry;
    return w;
}

service::Decision limited(bool allowed) {
    service::Decision d;
    d.policy = "per-key,per-ip";
    d.verdict.allowed = allowed;
    d.verdict.windows = {window("per-key", true, 7, 0), window("per-ip", allowed, allowed ? 3 : 0, allowed ? 0 : 12)};
    return d;
}

TEST(MakeAuthResponse, AllowedIs200WithEveryLimitInTheHeaders) {
    const auto res = make_auth_response(limited(true), 403, 11, true, false);
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(res["X-RateLimit-Limit"], "10");
    EXPECT_EQ(res["X-RateLimit-Remaining"], "3");  // the least remaining
    EXPECT_EQ(res["RateLimit-Policy"], R"("per-key";q=10;w=60, "per-ip";q=10;w=60)");
    EXPECT_EQ(res["RateLimit"], R"("per-key";r=7;t=5, "per-ip";r=3;t=5)");
    EXPECT_EQ(res[bhttp::field::retry_after], "");
    EXPECT_EQ(res[bhttp::field::cache_control], "no-store");
    // No body: nginx's auth_request reuses the upstream connection only then.
    EXPECT_EQ(res.body(), "");
    EXPECT_EQ(res[bhttp::field::content_length], "0");
}

TEST(MakeAuthResponse, DeniedUsesTheDenyStatusWithRetryAfter) {
    const auto res = make_auth_response(limited(false), 403, 11, true, false);
    EXPECT_EQ(res.result_int(), 403u);
    EXPECT_EQ(res[bhttp::field::retry_after], "12");
    EXPECT_EQ(res["X-RateLimit-Remaining"], "0");
    EXPECT_EQ(res["RateLimit"], R"("per-key";r=7;t=5, "per-ip";r=0;t=12)");
    EXPECT_EQ(res.body(), R"({"allowed":false,"policy":"per-ip","retry_after":12})");
    EXPECT_EQ(make_auth_response(limited(false), 429, 11, true, false).result_int(), 429u);
}

TEST(MakeAuthResponse, NotLimitedIs200WithoutLimitHeaders) {
    service::Decision d;
    d.limited = false;
    d.verdict.allowed = true;
    const auto res = make_auth_response(d, 429, 11, true, false);
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(res["X-RateLimit-Limit"], "");
    EXPECT_EQ(res["RateLimit"], "");
    EXPECT_EQ(res.body(), "");
}

TEST(MakeAuthResponse, DegradedFailOpenIs200AndFailClosedIsTheDenyStatus) {
    service::Decision d;
    d.degraded = true;
    d.store_error = errc::store_timeout;
    d.verdict.allowed = true;
    auto res = make_auth_response(d, 403, 11, true, false);
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(res["X-RateLimit-Degraded"], "store_timeout");
    EXPECT_EQ(res[bhttp::field::retry_after], "");
    EXPECT_EQ(res.body(), "");  // the header says degraded; an allow has no body

    d.verdict.allowed = false;
    res = make_auth_response(d, 403, 11, true, false);
    EXPECT_EQ(res.result_int(), 403u);  // never a 5xx: Envoy would count it as an error
    EXPECT_EQ(res[bhttp::field::retry_after], "1");
    EXPECT_EQ(res["X-RateLimit-Degraded"], "store_timeout");
}

TEST(MakeAuthResponse, HeadHasNoBody) {
    const auto res = make_auth_response(limited(false), 429, 11, true, true);
    EXPECT_EQ(res.body(), "");
    EXPECT_EQ(res[bhttp::field::content_length], "0");
    EXPECT_EQ(res[bhttp::field::retry_after], "12");
}

}  // namespace
}  // namespace ratelimitd::http
