// Issue 17 end to end, on a real redis-server: IPv6 clients share one budget per /64 through
// /v1/auth, every spelling of /login is limited by the /login route through /v1/auth and
// /v1/check, case_insensitive routes, and a scope with braces is never a hash tag.
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <string>
#include <vector>

namespace ratelimitd::test::identity_routes_test {
namespace {

// The tests' client connects from 127.0.0.1, the trusted proxy: X-Real-IP / X-Forwarded-For
// name the client, as behind nginx.
const char* const config = R"(
prefix: rl
policies:
  per-net: { algorithm: fixed_window, limit: 10, window: 60s }
  exact: { algorithm: fixed_window, limit: 4, window: 60s }
  login: { algorithm: fixed_window, limit: 5, window: 60s }
  admin: { algorithm: fixed_window, limit: 5, window: 60s }
identity:
  - { header: X-Tenant-Id }
  - { client_ip: true, ipv6_prefix: 64 }
  - { client_ip: true, name: exact_ip, ipv6_prefix: 128 }
trusted_proxies: ["127.0.0.1/32"]
routes:
  - { path: /login, policy: login }
  - { path: "/Admin/*", policy: admin, case_insensitive: true }
  - { path: "/exact/*", limits: [ { policy: exact, identity: exact_ip } ] }
  - { path: /net/public, policy: none }
  - { path: "/net/*", policy: per-net }
)";

// Each a spelling that a backend serves as /login (issue 17, Medium 6), and a few more.
const std::vector<std::string> login_spellings = {
    "/login", "/login/", "//login", "/login;jsessionid=x", "/%6Cogin", "/a/../login", "/%6c%6f%67%69%6e",
    "/./login", "/x/%2e%2e/login", "/..;/login", "/a%2F..%2Flogin", "///login//?next=/home"};

class IdentityRoutes : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        redis_ = new RedisServer();
        // A generous store timeout: a check failing open on a loaded machine would count as
        // admitted, and these tests count admissions exactly.
        server_ = new Ratelimitd(config, redis_->url(), {"--store-timeout", "1s"});
    }
    static void TearDownTestSuite() {
        delete server_;
        delete redis_;
    }
    void SetUp() override { redis_->command({"FLUSHALL"}); }

    static std::string get(const std::string& key) { return redis_->command({"GET", key}); }

    static RedisServer* redis_;
    static Ratelimitd* server_;
};
RedisServer* IdentityRoutes::redis_ = nullptr;
Ratelimitd* IdentityRoutes::server_ = nullptr;

TEST_F(IdentityRoutes, AddressesOfOneSlash64ShareOneBudgetExactlyUnderConcurrency) {
    // A client rotating through its /64, named by X-Real-IP and by X-Forwarded-For.
    const std::vector<std::map<std::string, std::string>> spellings = {
        {{"X-Real-IP", "2001:db8:1:2::1"}},
        {{"X-Real-IP", "2001:DB8:1:2:ffff:ffff:ffff:fffe"}},
        {{"X-Forwarded-For", "[2001:db8:1:2:abcd::9]:443"}},
        {{"X-Forwarded-For", "198.51.100.7, 2001:db8:1:2::77"}},
    };
    std::atomic<int> next{0};
    const auto tally = fire(server_->port(), 40, 8, [&](HttpClient& c) {
        auto headers = spellings[static_cast<std::size_t>(next.fetch_add(1)) % spellings.size()];
        headers["X-Original-URI"] = "/net/orders";
        return c.get("/v1/auth", headers);
    });
    EXPECT_EQ(tally.allowed, 10);
    EXPECT_EQ(tally.denied, 30);
    EXPECT_EQ(tally.other, 0);
    EXPECT_EQ(get("rl:per-net:ip:2001:db8:1:2::/64:global"), "10");

    // The neighbouring /64 is someone else, with a budget of its own.
    HttpClient c(server_->port());
    EXPECT_EQ(c.get("/v1/auth", {{"X-Original-URI", "/net/x"}, {"X-Real-IP", "2001:db8:1:3::1"}}).status, 200);
    EXPECT_EQ(get("rl:per-net:ip:2001:db8:1:3::/64:global"), "1");
}

TEST_F(IdentityRoutes, Ipv4StaysPerAddressAndANamedSourceKeepsItsOwnGrouping) {
    HttpClient c(server_->port());
    for (const char* ip : {"192.0.2.1", "192.0.2.2"}) {
        EXPECT_EQ(c.get("/v1/auth", {{"X-Original-URI", "/net/x"}, {"X-Real-IP", ip}}).status, 200);
        EXPECT_EQ(get(std::string("rl:per-net:ip:") + ip + ":global"), "1");
    }
    // /exact/* limits by exact_ip (ipv6_prefix: 128): two addresses of one /64, two budgets.
    for (const char* ip : {"2001:db8:1:2::1", "2001:db8:1:2::2"}) {
        const auto tally = fire(server_->port(), 10, 4, [&](HttpClient& h) {
            return h.get("/v1/auth", {{"X-Original-URI", "/exact/x"}, {"X-Real-IP", ip}});
        });
        EXPECT_EQ(tally.allowed, 4) << ip;
        EXPECT_EQ(tally.denied, 6) << ip;
        EXPECT_EQ(get(std::string("rl:exact:ip:") + ip + ":global"), "4");
    }
}

TEST_F(IdentityRoutes, ANetworkTenantCanBeCheckedByName) {
    // /v1/check accepts the tenant /v1/auth makes, so a caller can share the network's budget.
    HttpClient c(server_->port());
    const auto res =
        c.post("/v1/check", R"({"policy":"per-net","tenant":"ip:2001:db8:1:2::/64"})", {{"Content-Type", "application/json"}});
    EXPECT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(get("rl:per-net:ip:2001:db8:1:2::/64:global"), "1");
    EXPECT_EQ(c.post("/v1/check", R"({"policy":"per-net","tenant":"a/64"})", {}).status, 400);
}

TEST_F(IdentityRoutes, EverySpellingOfLoginIsLimitedByTheLoginRouteThroughAuth) {
    std::atomic<int> next{0};
    const auto tally = fire(server_->port(), 36, 8, [&](HttpClient& c) {
        const auto& uri = login_spellings[static_cast<std::size_t>(next.fetch_add(1)) % login_spellings.size()];
        return c.get("/v1/auth", {{"X-Original-URI", uri}, {"X-Real-IP", "192.0.2.50"}});
    });
    EXPECT_EQ(tally.allowed, 5);
    EXPECT_EQ(tally.denied, 31);
    EXPECT_EQ(tally.other, 0);
    EXPECT_EQ(get("rl:login:ip:192.0.2.50:global"), "5");
    EXPECT_EQ(redis_->keys().size(), 1u);  // no spelling made a key of its own
}

TEST_F(IdentityRoutes, EverySpellingOfLoginIsLimitedByTheLoginRouteThroughCheck) {
    std::atomic<int> next{0};
    const auto tally = fire(server_->port(), 36, 8, [&](HttpClient& c) {
        const auto& path = login_spellings[static_cast<std::size_t>(next.fetch_add(1)) % login_spellings.size()];
        const nlohmann::json body = {{"tenant", "tenant_login"}, {"method", "POST"}, {"path", path}};
        return c.post("/v1/check", body.dump(), {{"Content-Type", "application/json"}});
    });
    EXPECT_EQ(tally.allowed, 5);
    EXPECT_EQ(tally.denied, 31);
    EXPECT_EQ(tally.other, 0);
    EXPECT_EQ(get("rl:login:tenant_login:global"), "5");
}

TEST_F(IdentityRoutes, ASpellingOfAnUnlimitedPathUnderALimitedOneIsLimited) {
    // "/net/x/../public" is /net/public (policy: none) in normal form, but a backend that does
    // not normalise serves it under /net/*: it is limited there.
    HttpClient c(server_->port());
    const auto open = c.get("/v1/auth", {{"X-Original-URI", "/net/public"}, {"X-Real-IP", "192.0.2.77"}});
    EXPECT_EQ(open.status, 200);
    EXPECT_EQ(open.header("x-ratelimit-limit"), "");
    const std::vector<std::string> spellings = {"/net/x/../public", "/net/%2e%2e/public", "/net%2F..%2Fpublic"};
    std::atomic<int> next{0};
    const auto tally = fire(server_->port(), 15, 5, [&](HttpClient& h) {
        const auto& uri = spellings[static_cast<std::size_t>(next.fetch_add(1)) % spellings.size()];
        return h.get("/v1/auth", {{"X-Original-URI", uri}, {"X-Real-IP", "192.0.2.77"}});
    });
    EXPECT_EQ(tally.allowed, 10);
    EXPECT_EQ(tally.denied, 5);
    EXPECT_EQ(get("rl:per-net:ip:192.0.2.77:global"), "10");
}

TEST_F(IdentityRoutes, ACaseInsensitiveRouteCountsEveryCaseAsOne) {
    const std::vector<std::string> spellings = {"/admin/users", "/ADMIN/users", "/Admin/Users/", "/aDmIn/./x",
                                                "/%41dmin/x", "//ADMIN;x/y"};
    std::atomic<int> next{0};
    const auto tally = fire(server_->port(), 24, 6, [&](HttpClient& c) {
        const auto& uri = spellings[static_cast<std::size_t>(next.fetch_add(1)) % spellings.size()];
        return c.get("/v1/auth", {{"X-Original-URI", uri}, {"X-Tenant-Id", "tenant_admin"}});
    });
    EXPECT_EQ(tally.allowed, 5);
    EXPECT_EQ(tally.denied, 19);
    EXPECT_EQ(get("rl:admin:tenant_admin:global"), "5");
    // /login is case-sensitive: "/LOGIN" is not that route (and nothing else limits it).
    HttpClient c(server_->port());
    const auto res = c.get("/v1/auth", {{"X-Original-URI", "/LOGIN"}, {"X-Tenant-Id", "tenant_admin"}});
    EXPECT_EQ(res.status, 200);
    EXPECT_EQ(res.header("x-ratelimit-limit"), "");
}

TEST_F(IdentityRoutes, AScopeWithBracesIsNeverAClusterHashTag) {
    HttpClient c(server_->port());
    const auto res = c.post("/v1/check", R"({"policy":"login","tenant":"t1","scope":"{x}"})",
                            {{"Content-Type", "application/json"}});
    ASSERT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(nlohmann::json::parse(res.body)["scope"], "{x}");  // the caller's scope, as sent
    EXPECT_EQ(redis_->keys(), std::vector<std::string>{"rl:login:t1:%7Bx%7D"});
}

}  // namespace
}  // namespace ratelimitd::test::identity_routes_test
