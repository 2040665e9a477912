// /v1/check against the real binary and a real redis-server: exact admission under
// concurrency, isolation, Retry-After, TTLs, key names, SCRIPT FLUSH, bad input.
#include "support/held_window.hpp"
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

namespace ratelimitd::test::check_redis_test {
namespace {

using json = nlohmann::json;

// The *-short policies below, 2 per 2 s: the token bucket gives a unit back after 1 s, the
// fixed window ends 2 s after its first check.
constexpr std::chrono::seconds short_refill{1};
constexpr std::chrono::seconds fixed_short_window{2};

const char* const config = R"(
prefix: rl
default_policy: api-default
policies:
  api-default:
    algorithm: token_bucket
    limit: 20
    window: 60s
  tb:
    algorithm: token_bucket
    limit: 20
    window: 60s
  sl:
    algorithm: sliding_log
    limit: 20
    window: 60s
  fw:
    algorithm: fixed_window
    limit: 20
    window: 60s
  tb-short:
    algorithm: token_bucket
    limit: 2
    window: 2s
  sl-short:
    algorithm: sliding_log
    limit: 2
    window: 2s
  fw-short:
    algorithm: fixed_window
    limit: 2
    window: 2s
  big:
    algorithm: fixed_window
    limit: 100
    window: 60s
routes:
  - { method: POST, path: /v1/exports, policy: sl, scope: POST_/v1/exports }
  - { path: /health, policy: none }
  - { path: "/v1/*", policy: fw }
)";

class CheckRedis : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        redis_ = new RedisServer();
        server_ = new Ratelimitd(config, redis_->url());
    }
    static void TearDownTestSuite() {
        delete server_;
        delete redis_;
    }
    void SetUp() override { redis_->command({"FLUSHALL"}); }

    static HttpResponse check(HttpClient& c, const json& body) { return c.post("/v1/check", body.dump()); }

    static RedisServer* redis_;
    static Ratelimitd* server_;
};

RedisServer* CheckRedis::redis_ = nullptr;
Ratelimitd* CheckRedis::server_ = nullptr;

class ExactAdmission : public CheckRedis, public ::testing::WithParamInterface<const char*> {};

TEST_P(ExactAdmission, FiftyConcurrentChecksAdmitExactlyTheLimit) {
    const std::string policy = GetParam();
    auto tally = fire(server_->port(), 50, 16, [&](HttpClient& c) {
        return check(c, {{"policy", policy}, {"tenant", "tenant_1"}});
    });
    EXPECT_EQ(tally.allowed, 20);
    EXPECT_EQ(tally.denied, 30);
    EXPECT_EQ(tally.other, 0);
    for (const auto& d : tally.denials) {
        EXPECT_GE(std::stoi(d.header("retry-after")), 1);
        EXPECT_EQ(d.header("x-ratelimit-remaining"), "0");
        EXPECT_EQ(json::parse(d.body)["allowed"], false);
    }
}

TEST_P(ExactAdmission, CostSpendsThatManyUnits) {
    const std::string policy = GetParam();
    // 7 checks of cost 3 against a limit of 20: 6 fit (18 units), the 7th needs 21.
    auto tally = fire(server_->port(), 7, 7, [&](HttpClient& c) {
        return check(c, {{"policy", policy}, {"tenant", "tenant_cost"}, {"cost", 3}});
    });
    EXPECT_EQ(tally.allowed, 6);
    EXPECT_EQ(tally.denied, 1);
    HttpClient c(server_->port());
    auto res = check(c, {{"policy", policy}, {"tenant", "tenant_cost"}, {"cost", 2}});
    EXPECT_EQ(res.status, 200) << "2 units were still left";
    EXPECT_EQ(json::parse(res.body)["remaining"], 0);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ExactAdmission, ::testing::Values("tb", "sl", "fw"));

TEST_F(CheckRedis, TenantsAndScopesNeverShareACounter) {
    auto a = fire(server_->port(), 30, 8, [&](HttpClient& c) {
        return check(c, {{"policy", "fw"}, {"tenant", "alice"}});
    });
    auto b = fire(server_->port(), 30, 8, [&](HttpClient& c) {
        return check(c, {{"policy", "fw"}, {"tenant", "bob"}});
    });
    auto s = fire(server_->port(), 30, 8, [&](HttpClient& c) {
        return check(c, {{"policy", "fw"}, {"tenant", "alice"}, {"scope", "exports"}});
    });
    EXPECT_EQ(a.allowed, 20);
    EXPECT_EQ(b.allowed, 20);
    EXPECT_EQ(s.allowed, 20);
    // A tenant with ':' (an IPv6 address) gets its own unambiguous key.
    HttpClient c(server_->port());
    EXPECT_EQ(check(c, {{"policy", "fw"}, {"tenant", "ip:2001:db8::1"}}).status, 200);
    EXPECT_EQ(redis_->command({"EXISTS", "rl:fw:ip:2001:db8::1:global"}), "1");
}

TEST_F(CheckRedis, EveryKeyHasATtlAndTheDocumentedName) {
    HttpClient c(server_->port());
    for (const char* p : {"tb", "sl", "fw"}) {
        ASSERT_EQ(check(c, {{"policy", p}, {"tenant", "tenant_8231"}}).status, 200);
        ASSERT_EQ(check(c, {{"policy", p}, {"tenant", "tenant_8231"}, {"scope", "POST_/v1/x"}}).status, 200);
    }
    auto keys = redis_->keys();
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, (std::vector<std::string>{"rl:fw:tenant_8231:POST_/v1/x", "rl:fw:tenant_8231:global",
                                              "rl:sl:tenant_8231:POST_/v1/x", "rl:sl:tenant_8231:global",
                                              "rl:tb:tenant_8231:POST_/v1/x", "rl:tb:tenant_8231:global"}));
    for (const auto& k : keys) {
        const auto ttl = redis_->integer({"PTTL", k});
        EXPECT_GT(ttl, 0) << k;
        EXPECT_LE(ttl, 120'000) << k << ": at most twice the window";
    }
}

TEST_F(CheckRedis, DeniedChecksLeaveTheWindowAlone) {
    HttpClient c(server_->port());
    within(fixed_short_window, [&](int n) {  // the denial inside the 2 s window the admits opened
        const std::string tenant = "t" + std::to_string(n);
        const std::string key = "rl:fw-short:" + tenant + ":global";
        for (int i = 0; i < 2; ++i) ASSERT_EQ(check(c, {{"policy", "fw-short"}, {"tenant", tenant}}).status, 200);
        const auto before = redis_->command({"GET", key});
        const auto ttl_before = redis_->integer({"PTTL", key});
        EXPECT_EQ(check(c, {{"policy", "fw-short"}, {"tenant", tenant}}).status, 429);
        EXPECT_EQ(redis_->command({"GET", key}), before);
        EXPECT_LE(redis_->integer({"PTTL", key}), ttl_before) << "a deny must not extend the window";
    });
}

class RetryAfter : public CheckRedis, public ::testing::WithParamInterface<const char*> {};

TEST_P(RetryAfter, TheNextCheckPassesAfterRetryAfterSeconds) {
    const std::string policy = GetParam();
    HttpClient c(server_->port());
    json body;
    int retry_after = 0;
    // The denial is the policy's only while the third check lands before a unit comes back (the
    // token bucket's 2 s / 2): a machine slower than that tries a new tenant.
    within(short_refill, [&](int n) {
        body = {{"policy", policy}, {"tenant", "waiter-" + std::to_string(n)}};
        ASSERT_EQ(check(c, body).status, 200);
        ASSERT_EQ(check(c, body).status, 200);
        auto denied = check(c, body);
        ASSERT_EQ(denied.status, 429);
        retry_after = std::stoi(denied.header("retry-after"));
        EXPECT_GE(retry_after, 1);
        EXPECT_LE(retry_after, 2);
        EXPECT_EQ(denied.header("ratelimit"), "\"" + policy + "\";r=0;t=" + std::to_string(retry_after));
    });
    if (HasFailure()) return;
    // Retry-After is whole seconds of the store's millisecond state, and Redis drops a key only
    // in the millisecond after its expiry time: when the three checks above run within one
    // millisecond (a fast machine), a check at exactly Retry-After can still meet the window it
    // was denied by. 5 ms covers that granularity and nothing more.
    std::this_thread::sleep_for(std::chrono::seconds(retry_after) + std::chrono::milliseconds(5));
    EXPECT_EQ(check(c, body).status, 200);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, RetryAfter, ::testing::Values("tb-short", "sl-short", "fw-short"));

TEST_F(CheckRedis, ScriptFlushMidRunIsInvisibleAndCountsStayExact) {
    auto first = fire(server_->port(), 10, 4, [&](HttpClient& c) {
        return check(c, {{"policy", "sl"}, {"tenant", "flush"}});
    });
    ASSERT_EQ(first.allowed, 10);
    ASSERT_EQ(redis_->command({"SCRIPT", "FLUSH"}), "OK");
    auto second = fire(server_->port(), 20, 8, [&](HttpClient& c) {
        return check(c, {{"policy", "sl"}, {"tenant", "flush"}});
    });
    EXPECT_EQ(second.allowed, 10);
    EXPECT_EQ(second.denied, 10);
    EXPECT_EQ(second.other, 0);
}

TEST_F(CheckRedis, BadInputNeverReachesRedis) {
    HttpClient c(server_->port());
    ASSERT_EQ(check(c, {{"policy", "fw"}, {"tenant", "known"}}).status, 200);
    const auto keys_before = redis_->integer({"DBSIZE"});
    const auto count_before = redis_->command({"GET", "rl:fw:known:global"});

    struct Case {
        std::string body;
        int status;
        std::string error;
    };
    const std::vector<Case> cases = {
        {"not json", 400, "invalid_request"},
        {R"({"policy":"fw","tenant":7})", 400, "invalid_request"},
        {R"({"policy":"fw","tenant":""})", 400, "invalid_request"},
        {R"({"policy":"fw","tenant":")" + std::string(129, 'a') + R"("})", 400, "invalid_request"},
        {R"({"policy":"fw","tenant":"kn own"})", 400, "invalid_request"},
        {R"({"policy":"fw","tenant":"known","scope":"a:b"})", 400, "invalid_request"},
        {R"({"policy":"fw","tenant":"known","scope":""})", 400, "invalid_request"},
        {R"({"policy":"nope","tenant":"known"})", 400, "unknown_policy"},
        {R"({"policy":"fw","tenant":"known","cost":0})", 400, "invalid_cost"},
        {R"({"policy":"fw","tenant":"known","cost":1000001})", 400, "invalid_cost"},
        {R"({"policy":"fw","tenant":"known","cost":21})", 400, "invalid_cost"},
        {R"({"policy":"fw","tenant":"known","cost":"1"})", 400, "invalid_request"},
        {R"({"policy":"fw","tenant":"known","pad":")" + std::string(17 * 1024, 'x') + R"("})", 413, "payload_too_large"},
    };
    for (const auto& tc : cases) {
        HttpClient fresh(server_->port());
        auto res = fresh.post("/v1/check", tc.body);
        EXPECT_EQ(res.status, tc.status) << tc.body.substr(0, 80);
        auto err = json::parse(res.body, nullptr, false);
        ASSERT_FALSE(err.is_discarded()) << res.body;
        EXPECT_EQ(err["error"], tc.error) << tc.body.substr(0, 80);
        EXPECT_FALSE(err["detail"].get<std::string>().empty());
    }
    auto get = c.get("/v1/check?policy=fw&tenant=known&cost=abc");
    EXPECT_EQ(get.status, 400);
    EXPECT_EQ(redis_->integer({"DBSIZE"}), keys_before);
    EXPECT_EQ(redis_->command({"GET", "rl:fw:known:global"}), count_before);
}

TEST_F(CheckRedis, GetWithQueryParametersDecidesLikePost) {
    HttpClient c(server_->port());
    auto res = c.get("/v1/check?policy=fw&tenant=tenant_q&scope=POST_%2Fv1%2Fx&cost=5");
    ASSERT_EQ(res.status, 200);
    auto body = json::parse(res.body);
    EXPECT_EQ(body["scope"], "POST_/v1/x");
    EXPECT_EQ(body["remaining"], 15);
    EXPECT_EQ(redis_->command({"GET", "rl:fw:tenant_q:POST_/v1/x"}), "5");
}

TEST_F(CheckRedis, RoutesResolvePolicyAndScope) {
    HttpClient c(server_->port());
    auto res = check(c, {{"tenant", "r1"}, {"method", "POST"}, {"path", "/v1/exports"}});
    ASSERT_EQ(res.status, 200);
    auto body = json::parse(res.body);
    EXPECT_EQ(body["policy"], "sl");
    EXPECT_EQ(body["scope"], "POST_/v1/exports");

    res = check(c, {{"tenant", "r1"}, {"method", "GET"}, {"path", "/v1/things"}});
    EXPECT_EQ(json::parse(res.body)["policy"], "fw");

    res = check(c, {{"tenant", "r1"}, {"path", "/elsewhere"}});
    EXPECT_EQ(json::parse(res.body)["policy"], "api-default");

    const auto keys_before = redis_->integer({"DBSIZE"});
    res = check(c, {{"tenant", "r1"}, {"method", "GET"}, {"path", "/health"}});
    EXPECT_EQ(res.status, 200);
    EXPECT_EQ(json::parse(res.body)["allowed"], true);
    EXPECT_EQ(res.header("x-ratelimit-limit"), "");
    EXPECT_EQ(res.header("ratelimit"), "");
    EXPECT_EQ(redis_->integer({"DBSIZE"}), keys_before);
}

TEST_F(CheckRedis, HeadersAndBodyAgreeAndComeFromRedisTime) {
    HttpClient c(server_->port());
    const auto redis_now = std::stoll(redis_->command({"TIME"}).substr(0, 10));
    auto res = check(c, {{"policy", "fw"}, {"tenant", "hdr"}});
    ASSERT_EQ(res.status, 200);
    auto body = json::parse(res.body);
    EXPECT_EQ(res.header("x-ratelimit-limit"), "20");
    EXPECT_EQ(res.header("x-ratelimit-remaining"), "19");
    EXPECT_EQ(res.header("x-ratelimit-reset"), std::to_string(body["reset"].get<long long>()));
    EXPECT_NEAR(body["reset"].get<long long>(), redis_now + 60, 2);
    EXPECT_EQ(res.header("ratelimit-policy"), "\"fw\";q=20;w=60");
    EXPECT_EQ(res.header("ratelimit"), "\"fw\";r=19;t=60");
    EXPECT_EQ(res.header("retry-after"), "");
    EXPECT_EQ(body["retry_after"], 0);
}

TEST_F(CheckRedis, UnknownPathsAndMethodsAreNamed) {
    HttpClient c(server_->port());
    auto res = c.get("/nope");
    EXPECT_EQ(res.status, 404);
    EXPECT_EQ(json::parse(res.body)["error"], "not_found");
    res = c.request("DELETE", "/v1/check", "", {});
    EXPECT_EQ(res.status, 405);
    EXPECT_EQ(json::parse(res.body)["error"], "method_not_allowed");
    res = c.get("/healthz");
    EXPECT_EQ(res.status, 200);
    res = c.get("/readyz");
    EXPECT_EQ(res.status, 200);
}

TEST_F(CheckRedis, HeaderBlockOver16KiBGets431) {
    HttpClient c(server_->port());
    auto res = c.get("/healthz", {{"X-Padding", std::string(17 * 1024, 'p')}});
    EXPECT_EQ(res.status, 431);
}

}  // namespace
}  // namespace ratelimitd::test::check_redis_test
