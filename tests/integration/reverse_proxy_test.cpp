// /v1/auth end to end: a real nginx running the shipped config/nginx/ratelimitd.conf in front
// of a tiny upstream, ratelimitd on a real redis-server: exact limits under concurrency, 429
// with Retry-After and limit headers, hashed API keys, spoofing, layered limits, sidecar down.
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/nginx.hpp"
#include "support/processes.hpp"

#include "ratelimitd/policy/cidr.hpp"
#include "ratelimitd/policy/identity.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>

namespace ratelimitd::test::reverse_proxy_test {
namespace {

constexpr const char* hash_secret = "integration-hash-secret-0123456789";

// nginx connects from 127.0.0.2 (proxy_bind), the only trusted proxy; the tests' own clients
// connect from 127.0.0.1, so a direct request to ratelimitd comes from an untrusted peer.
const std::string config = std::string(R"(
prefix: rl
hash_secret: ")") + hash_secret + R"("
policies:
  api: { algorithm: fixed_window, limit: 10, window: 60s }
  lk: { algorithm: fixed_window, limit: 2, window: 60s }
  lip: { algorithm: fixed_window, limit: 8, window: 60s }
  strict: { algorithm: fixed_window, limit: 10, window: 60s, on_store_error: deny }
  spoof: { algorithm: fixed_window, limit: 10, window: 60s }
  direct: { algorithm: fixed_window, limit: 10, window: 60s }
  statuses: { algorithm: fixed_window, limit: 10, window: 60s }
identity:
  - { name: api_key, header: X-Api-Key, hash: true }
  - { client_ip: true }
trusted_proxies: ["127.0.0.2/32"]
routes:
  - { path: /health, policy: none }
  - path: "/layered/*"
    limits:
      - { policy: lk, identity: api_key }
      - { policy: lip, identity: client_ip }
  - { path: "/strict/*", policy: strict }
  - { path: "/spoof/*", policy: spoof }
  - { path: "/direct/*", policy: direct }
  - { path: "/statuses/*", policy: statuses }
  - { path: "/api/*", policy: api }
)";

std::string key_of(const std::string& policy, const std::string& tenant) {
    return "rl:" + policy + ":" + tenant + ":global";
}

std::string hashed(const std::string& api_key) { return policy::hash_identity(hash_secret, api_key).str(); }

class ReverseProxy : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        redis_ = new RedisServer();
        // Debug logging and every check in the access log: the raw-key test reads all of it.
        // A generous store timeout: these tests count exact admissions, and a check that
        // failed open on a loaded machine (sanitizer builds, shared cores) would count as
        // admitted; store timeouts have their own tests (faults_test.cpp).
        ratelimitd_ = new Ratelimitd(config, redis_->url(),
                                     {"--log-level", "debug", "--access-log", "all", "--store-timeout", "1s"});
        nginx_ = new Nginx({ratelimitd_->port(), "closed", "127.0.0.2"});
    }
    static void TearDownTestSuite() {
        delete nginx_;
        delete ratelimitd_;
        delete redis_;
    }
    // Each test limits its own keys: FLUSHALL empties Redis, not ratelimitd's local cache of
    // recent denials, so a key denied in one test would stay denied in the next.
    void SetUp() override { redis_->command({"FLUSHALL"}); }

    static std::string get(const std::string& key) { return redis_->command({"GET", key}); }

    static RedisServer* redis_;
    static Ratelimitd* ratelimitd_;
    static Nginx* nginx_;
};

RedisServer* ReverseProxy::redis_ = nullptr;
Ratelimitd* ReverseProxy::ratelimitd_ = nullptr;
Nginx* ReverseProxy::nginx_ = nullptr;

TEST_F(ReverseProxy, ExactlyTheLimitPassesUnderConcurrencyThen429WithHeaders) {
    HttpClient client(nginx_->port());
    const std::map<std::string, std::string> key{{"X-Api-Key", "sk_live_alice"}};

    // An allowed response is the upstream's, with the limit headers added.
    const auto first = client.get("/api/orders?page=2", key);
    ASSERT_EQ(first.status, 200) << first.body;
    EXPECT_EQ(first.body, "upstream ok\n");
    EXPECT_EQ(first.header("x-ratelimit-limit"), "10");
    EXPECT_EQ(first.header("x-ratelimit-remaining"), "9");
    EXPECT_FALSE(first.header("x-ratelimit-reset").empty());
    EXPECT_EQ(first.header("ratelimit-policy"), R"("api";q=10;w=60)");
    EXPECT_EQ(first.header("ratelimit").rfind(R"("api";r=9;t=)", 0), 0u) << first.header("ratelimit");
    EXPECT_EQ(first.header("retry-after"), "");

    // 39 more over 8 connections: exactly 9 more pass.
    const auto tally = fire(nginx_->port(), 39, 8, [&](HttpClient& c) { return c.get("/api/orders", key); });
    EXPECT_EQ(tally.allowed, 9);
    EXPECT_EQ(tally.denied, 30);
    EXPECT_EQ(tally.other, 0);
    for (const auto& d : tally.denials) {
        EXPECT_GE(std::stoi(d.header("retry-after")), 1);
        EXPECT_LE(std::stoi(d.header("retry-after")), 60);
        EXPECT_EQ(d.header("x-ratelimit-limit"), "10");
        EXPECT_EQ(d.header("x-ratelimit-remaining"), "0");
        EXPECT_FALSE(d.header("x-ratelimit-reset").empty());
        EXPECT_EQ(d.header("ratelimit").rfind(R"("api";r=0;t=)" + d.header("retry-after"), 0), 0u)
            << d.header("ratelimit");
        EXPECT_EQ(d.header("cache-control"), "no-store");
        EXPECT_NE(d.body.find("rate_limited"), std::string::npos) << d.body;
        EXPECT_EQ(d.body.find("upstream ok"), std::string::npos);  // never forwarded
    }
    EXPECT_EQ(get(key_of("api", hashed("sk_live_alice"))), "10");
}

TEST_F(ReverseProxy, RoutesWithPolicyNoneAreNotLimitedAndCarryNoLimitHeaders) {
    HttpClient client(nginx_->port());
    for (int i = 0; i < 15; ++i) {
        const auto res = client.get("/health");
        ASSERT_EQ(res.status, 200);
        EXPECT_EQ(res.header("x-ratelimit-limit"), "");
        EXPECT_EQ(res.header("ratelimit"), "");
    }
    EXPECT_EQ(redis_->integer({"DBSIZE"}), 0);
}

TEST_F(ReverseProxy, TwoApiKeysDoNotShareABudget) {
    HttpClient client(nginx_->port());
    for (int i = 0; i < 10; ++i) ASSERT_EQ(client.get("/api/x", {{"X-Api-Key", "key-one"}}).status, 200);
    EXPECT_EQ(client.get("/api/x", {{"X-Api-Key", "key-one"}}).status, 429);
    const auto other = client.get("/api/x", {{"X-Api-Key", "key-two"}});
    EXPECT_EQ(other.status, 200);
    EXPECT_EQ(other.header("x-ratelimit-remaining"), "9");
    EXPECT_EQ(client.get("/api/x").header("x-ratelimit-remaining"), "9");  // no key: by address
    EXPECT_EQ(get(key_of("api", hashed("key-one"))), "10");
    EXPECT_EQ(get(key_of("api", hashed("key-two"))), "1");
    EXPECT_EQ(get(key_of("api", "ip:127.0.0.1")), "1");
}

TEST_F(ReverseProxy, TheRawKeyAppearsNowhereInRedisNorInTheLog) {
    const std::string raw = "sk_live_4f9a7c1e9d2b8a6f";
    HttpClient client(nginx_->port());
    for (int i = 0; i < 12; ++i) client.get("/api/x", {{"X-Api-Key", raw}});
    const auto keys = redis_->keys();
    ASSERT_EQ(keys.size(), 1u);
    EXPECT_EQ(keys[0], key_of("api", hashed(raw)));
    for (const auto& k : keys) {
        EXPECT_EQ(k.find(raw), std::string::npos) << k;
        EXPECT_EQ(redis_->command({"DUMP", k}).find(raw), std::string::npos);
    }
    // The access log did record these checks (so the log was there to leak into)...
    const std::string log = ratelimitd_->process().log();
    EXPECT_NE(log.find("tenant=" + hashed(raw)), std::string::npos);
    // ...and nowhere the key itself.
    EXPECT_EQ(log.find(raw), std::string::npos);
}

TEST_F(ReverseProxy, SpoofedForwardingHeadersThroughNginxAreIgnored) {
    HttpClient client(nginx_->port());
    int allowed = 0;
    for (int i = 0; i < 20; ++i) {
        const std::string fake = "203.0.113." + std::to_string(i + 1);
        const auto res = client.get("/spoof/x", {{"X-Forwarded-For", fake}, {"X-Real-IP", fake}});
        allowed += res.status == 200 ? 1 : 0;
    }
    EXPECT_EQ(allowed, 10);  // one budget, the client's real address...
    EXPECT_EQ(get(key_of("spoof", "ip:127.0.0.1")), "10");
    for (const auto& k : redis_->keys()) EXPECT_EQ(k.find("203.0.113."), std::string::npos) << k;
    // ...which nginx (trusted, at 127.0.0.2) reported: not nginx's own address.
    EXPECT_EQ(get(key_of("spoof", "ip:127.0.0.2")), "(nil)");
}

TEST_F(ReverseProxy, ForwardingHeadersFromAnUntrustedPeerAreIgnored) {
    // Straight to ratelimitd from 127.0.0.1, which is not in trusted_proxies.
    HttpClient client(ratelimitd_->port());
    int allowed = 0;
    for (int i = 0; i < 20; ++i) {
        const std::string fake = "198.51.100." + std::to_string(i + 1);
        const auto res = client.get("/v1/auth", {{"X-Original-URI", "/direct/x"},
                                                 {"X-Real-IP", fake},
                                                 {"X-Forwarded-For", fake + ", 127.0.0.2"}});
        ASSERT_TRUE(res.status == 200 || res.status == 429) << res.status << " " << res.body;
        allowed += res.status == 200 ? 1 : 0;
    }
    EXPECT_EQ(allowed, 10);
    EXPECT_EQ(redis_->keys(), std::vector<std::string>{key_of("direct", "ip:127.0.0.1")});
}

TEST_F(ReverseProxy, LayeredDenialByOneLimitChargesNoneOfTheOthers) {
    HttpClient client(nginx_->port());
    const std::string ip_key = key_of("lip", "ip:127.0.0.1");
    auto as = [&](const std::string& api_key) { return client.get("/layered/x", {{"X-Api-Key", api_key}}); };

    // Allowed: both limits charged, both listed.
    const auto ok = as("k1");
    ASSERT_EQ(ok.status, 200);
    EXPECT_EQ(ok.header("ratelimit-policy"), R"("lk";q=2;w=60, "lip";q=8;w=60)");
    EXPECT_EQ(ok.header("x-ratelimit-remaining"), "1");  // the least remaining: lk
    ASSERT_EQ(as("k1").status, 200);
    EXPECT_EQ(get(key_of("lk", hashed("k1"))), "2");
    EXPECT_EQ(get(ip_key), "2");

    // The per-key limit denies: the per-ip counter is not charged.
    const auto denied = as("k1");
    EXPECT_EQ(denied.status, 429);
    EXPECT_EQ(denied.header("ratelimit-policy"), R"("lk";q=2;w=60, "lip";q=8;w=60)");
    EXPECT_EQ(denied.header("x-ratelimit-limit"), "2");  // the limit that denied
    EXPECT_FALSE(denied.header("retry-after").empty());
    EXPECT_EQ(get(ip_key), "2");

    // Fill the per-ip limit with other keys, then it denies: the new key is not charged.
    for (const char* k : {"k2", "k3", "k4"}) {
        ASSERT_EQ(as(k).status, 200);
        ASSERT_EQ(as(k).status, 200);
    }
    EXPECT_EQ(get(ip_key), "8");
    const auto by_ip = as("k5");
    EXPECT_EQ(by_ip.status, 429);
    EXPECT_EQ(by_ip.header("x-ratelimit-limit"), "8");
    EXPECT_EQ(get(key_of("lk", hashed("k5"))), "(nil)");
    EXPECT_EQ(get(ip_key), "8");
    EXPECT_EQ(get(key_of("lk", hashed("k1"))), "2");
}

TEST_F(ReverseProxy, LayeredUnderConcurrencyChargesOnlyWhatIsAdmitted) {
    // 60 requests at once, each with its own key: only the per-ip limit (8) can deny, and the
    // per-key counters must add up to exactly the admitted requests.
    std::atomic<int> n{0};
    const auto tally = fire(nginx_->port(), 60, 8, [&](HttpClient& c) {
        return c.get("/layered/x", {{"X-Api-Key", "burst-" + std::to_string(n.fetch_add(1))}});
    });
    EXPECT_EQ(tally.allowed, 8);
    EXPECT_EQ(tally.denied, 52);
    EXPECT_EQ(get(key_of("lip", "ip:127.0.0.1")), "8");
    int per_key_keys = 0;
    for (const auto& k : redis_->keys()) {
        if (k.rfind("rl:lk:", 0) == 0) {
            ++per_key_keys;
            EXPECT_EQ(get(k), "1") << k;
        }
    }
    EXPECT_EQ(per_key_keys, 8);
}

TEST_F(ReverseProxy, AuthAnswersDirectlyWithTheConfiguredStatuses) {
    // Traefik / Envoy style: no ?deny_status, so auth.deny_status (default 429).
    HttpClient client(ratelimitd_->port());
    for (int i = 0; i < 10; ++i) {
        ASSERT_EQ(client.get("/v1/auth", {{"X-Forwarded-Method", "GET"}, {"X-Forwarded-Uri", "/statuses/y"}}).status, 200);
    }
    const auto traefik = client.get("/v1/auth", {{"X-Forwarded-Method", "GET"}, {"X-Forwarded-Uri", "/statuses/y"}});
    EXPECT_EQ(traefik.status, 429);
    EXPECT_FALSE(traefik.header("retry-after").empty());
    EXPECT_EQ(traefik.header("x-ratelimit-remaining"), "0");
    // Envoy's path_prefix: the original method and path follow /v1/auth.
    const auto envoy = client.request("POST", "/v1/auth/statuses/y?deny_status=500", "", {});
    EXPECT_EQ(envoy.status, 429);  // the client's query never sets our status
    // nginx's per-location override; a bad value is refused before any counting.
    EXPECT_EQ(client.get("/v1/auth?deny_status=403", {{"X-Original-URI", "/statuses/y"}}).status, 403);
    EXPECT_EQ(client.get("/v1/auth?deny_status=302", {{"X-Original-URI", "/statuses/y"}}).status, 400);
    EXPECT_EQ(get(key_of("statuses", "ip:127.0.0.1")), "10");
}

TEST_F(ReverseProxy, LayeredScriptIsReloadedAfterScriptFlush) {
    HttpClient client(nginx_->port());
    ASSERT_EQ(client.get("/layered/x", {{"X-Api-Key", "f1"}}).status, 200);
    redis_->command({"SCRIPT", "FLUSH"});  // NOSCRIPT next: re-sent once with EVAL
    const auto res = client.get("/layered/x", {{"X-Api-Key", "f1"}});
    EXPECT_EQ(res.status, 200);
    EXPECT_EQ(res.header("x-ratelimit-degraded"), "");
    EXPECT_EQ(get(key_of("lk", hashed("f1"))), "2");
    EXPECT_EQ(get(key_of("lip", "ip:127.0.0.1")), "2");
}

TEST_F(ReverseProxy, V1CheckOnALayeredRouteAppliesEveryLimitToTheTenant) {
    HttpClient client(ratelimitd_->port());
    const std::string body = R"({"tenant":"t1","method":"GET","path":"/layered/x"})";
    for (int i = 0; i < 2; ++i) {
        const auto res = client.post("/v1/check", body);
        ASSERT_EQ(res.status, 200) << res.body;
        const auto j = nlohmann::json::parse(res.body);
        EXPECT_EQ(j.value("policy", ""), "lk,lip");
        EXPECT_EQ(j.value("windows", nlohmann::json::array()).size(), 2u);
    }
    const auto denied = client.post("/v1/check", body);
    EXPECT_EQ(denied.status, 429);
    EXPECT_EQ(nlohmann::json::parse(denied.body).value("policy", ""), "lk,lip");
    EXPECT_EQ(get(key_of("lk", "t1")), "2");
    EXPECT_EQ(get(key_of("lip", "t1")), "2");  // not charged by the denied third
}

TEST_F(ReverseProxy, PoliciesEndpointListsEveryLimitOfALayeredRoute) {
    HttpClient client(ratelimitd_->port());
    const auto res = client.get("/v1/policies");
    ASSERT_EQ(res.status, 200) << res.body;
    const auto routes = nlohmann::json::parse(res.body).value("routes", nlohmann::json::array());
    bool seen = false;
    for (const auto& r : routes) {
        if (r["path"] != "/layered/*") {
            EXPECT_FALSE(r.contains("limits")) << r.dump();
            continue;
        }
        seen = true;
        EXPECT_EQ(r["limits"], nlohmann::json::parse(
                                   R"([{"policy":"lk","identity":"api_key"},{"policy":"lip","identity":"client_ip"}])"));
    }
    EXPECT_TRUE(seen);
}

TEST(ReverseProxyDown, ClosedVariantAnswers500AndOpenVariantServesTheUpstream) {
    // Nothing listens on this port: every auth subrequest fails.
    const unsigned short dead = free_port();
    Nginx closed({dead, "closed", ""});
    HttpClient to_closed(closed.port());
    EXPECT_EQ(to_closed.get("/api/x").status, 500);

    Nginx open({dead, "open", ""});
    HttpClient to_open(open.port());
    const auto res = to_open.get("/api/x");
    EXPECT_EQ(res.status, 200);
    EXPECT_EQ(res.body, "upstream ok\n");
    EXPECT_EQ(res.header("x-ratelimit-limit"), "");
}

TEST(ReverseProxyStoreDown, PoliciesFailOpenOrClosedThroughNginx) {
    // ratelimitd up, its Redis not: each policy answers by on_store_error.
    Ratelimitd ratelimitd(config, "redis://127.0.0.1:" + std::to_string(free_port()));
    Nginx nginx({ratelimitd.port(), "closed", "127.0.0.2"});
    HttpClient client(nginx.port());
    const auto open = client.get("/api/x");
    EXPECT_EQ(open.status, 200);
    EXPECT_EQ(open.body, "upstream ok\n");
    EXPECT_FALSE(open.header("x-ratelimit-degraded").empty());
    const auto closed = client.get("/strict/x");
    EXPECT_EQ(closed.status, 429);
    EXPECT_EQ(closed.header("retry-after"), "1");
    EXPECT_FALSE(closed.header("x-ratelimit-degraded").empty());
}

TEST(NginxConfig, RenderingFillsEveryPlaceholder) {
    EXPECT_THROW(render_nginx_config({{"LISTEN", "80"}}), std::runtime_error);
    const std::string text = render_nginx_config(
        {{"LISTEN", "80"}, {"RATELIMITD_ADDR", "r:8080"}, {"UPSTREAM_ADDR", "a:80"}, {"RATELIMITD_DOWN", "open"}});
    EXPECT_NE(text.find("error_page 500 = @ratelimitd_open;"), std::string::npos);
    EXPECT_NE(text.find("proxy_pass http://ratelimitd/v1/auth?deny_status=403;"), std::string::npos);
}

std::string read_source(const std::string& relative) {
    std::ifstream in(std::string(RATELIMITD_SOURCE_DIR) + "/" + relative);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(NginxConfig, ReadmeAndDockerComposeUseTheTestedFile) {
    const std::string conf = read_source("config/nginx/ratelimitd.conf");
    ASSERT_FALSE(conf.empty());
    // What a user copies from docs/proxies.md is byte for byte the file these tests run.
    EXPECT_NE(read_source("docs/proxies.md").find("```nginx\n" + conf + "```"), std::string::npos);

    const std::string compose = read_source("docker/docker-compose.yml");
    EXPECT_NE(compose.find("../config/nginx/ratelimitd.conf:/etc/nginx/templates/default.conf.template"),
              std::string::npos);
    // Every placeholder of the file is set in the compose file.
    std::set<std::string> names;
    for (auto at = conf.find("${"); at != std::string::npos; at = conf.find("${", at + 2)) {
        names.insert(conf.substr(at + 2, conf.find('}', at) - at - 2));
    }
    EXPECT_EQ(names, (std::set<std::string>{"LISTEN", "RATELIMITD_ADDR", "RATELIMITD_DOWN", "UPSTREAM_ADDR"}));
    for (const auto& name : names) EXPECT_NE(compose.find("      " + name + ": "), std::string::npos) << name;

    // ratelimitd's compose config loads and trusts exactly nginx's fixed address.
    EXPECT_NE(compose.find("ipv4_address: 172.28.0.10"), std::string::npos);
    const auto cfg = policy::load_config(std::string(RATELIMITD_SOURCE_DIR) + "/docker/ratelimitd.yaml");
    ASSERT_EQ(cfg.registry.trusted_proxies.size(), 1u);
    EXPECT_TRUE(policy::cidr_contains(cfg.registry.trusted_proxies[0], "172.28.0.10"));
    EXPECT_FALSE(policy::cidr_contains(cfg.registry.trusted_proxies[0], "172.28.0.11"));
}

}  // namespace
}  // namespace ratelimitd::test::reverse_proxy_test
