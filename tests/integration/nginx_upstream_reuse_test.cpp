// The shipped nginx config keeps its connections to ratelimitd: a real nginx running
// config/nginx/ratelimitd.conf, ratelimitd on a real redis-server, and ratelimitd's own count
// of the connections it accepted. nginx's auth_request keeps an upstream connection only when
// the answer left no body unread; each answer with a body would cost a new connection.
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/metrics_text.hpp"
#include "support/nginx.hpp"
#include "support/processes.hpp"

#include "ratelimitd/policy/identity.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ratelimitd::test::nginx_upstream_reuse_test {
namespace {

constexpr const char* hash_secret = "reuse-test-hash-secret-0123456789";
constexpr int limit = 300;

// nginx connects from 127.0.0.2 (proxy_bind), the trusted proxy. The key is hashed: the
// hashed-identity path is the one a keyed HMAC serves on every call.
const std::string config = std::string(R"(
prefix: rl
hash_secret: ")") + hash_secret + R"("
policies:
  reuse: { algorithm: fixed_window, limit: )" + std::to_string(limit) + R"(, window: 60s }
identity:
  - { header: X-Api-Key, hash: true }
  - { client_ip: true }
trusted_proxies: ["127.0.0.2/32"]
routes:
  - { path: "/api/*", policy: reuse }
)";

const char* const accepted_series = "ratelimitd_connections_accepted_total";

TEST(NginxUpstreamReuse, KeepAliveClientsCostAtMostOneRatelimitdConnectionPerHundredRequests) {
    RedisServer redis;
    // A generous store timeout: the limit below is counted exactly, and a check failing open
    // on a loaded machine would count as admitted.
    Ratelimitd ratelimitd(config, redis.url(), {"--store-timeout", "1s"});
    Nginx nginx({ratelimitd.port(), "closed", "127.0.0.2"});
    // One keep-alive connection for both scrapes: it is counted once, before the first.
    HttpClient scrape(ratelimitd.port());
    const double before = sample(scrape.get("/metrics").body, accepted_series);
    ASSERT_GE(before, 1);

    // 800 requests over 4 keep-alive client connections: 300 allowed, 500 denied. Denials
    // matter as much as allows: an abusive client is all denials.
    constexpr int total = 800;
    const std::map<std::string, std::string> key{{"X-Api-Key", "sk_live_reuse"}};
    const auto tally = fire(nginx.port(), total, 4, [&](HttpClient& c) { return c.get("/api/orders", key); });
    EXPECT_EQ(tally.allowed, limit);
    EXPECT_EQ(tally.denied, total - limit);
    EXPECT_EQ(tally.other, 0);
    EXPECT_EQ(redis.command({"GET", "rl:reuse:" + policy::hash_identity(hash_secret, "sk_live_reuse").str() + ":global"}),
              std::to_string(limit));

    const double accepted = sample(scrape.get("/metrics").body, accepted_series) - before;
    // nginx needs one connection per concurrent subrequest (4 here) and no more; a config or
    // an answer that left a body unread would make this 800.
    EXPECT_LE(accepted, total / 100) << accepted << " connections for " << total << " proxied requests";
    EXPECT_GE(accepted, 1);
    RecordProperty("ratelimitd_connections_per_100_requests", std::to_string(accepted * 100 / total));
}

// What lets any proxy keep its connection: an allow has no body; HEAD answers as GET does,
// without a body, allowed or denied. Envoy / Traefik style, straight to ratelimitd.
TEST(NginxUpstreamReuse, AllowsHaveNoBodyAndHeadAnswersLikeGet) {
    RedisServer redis;
    Ratelimitd ratelimitd(config, redis.url(), {"--store-timeout", "1s"});
    HttpClient client(ratelimitd.port());
    const std::map<std::string, std::string> original{{"X-Forwarded-Method", "GET"},
                                                      {"X-Forwarded-Uri", "/api/head"},
                                                      {"X-Api-Key", "sk_head"}};
    const auto allowed = client.get("/v1/auth", original);
    ASSERT_EQ(allowed.status, 200);
    EXPECT_EQ(allowed.body, "");
    EXPECT_EQ(allowed.header("content-length"), "0");
    EXPECT_EQ(allowed.header("x-ratelimit-remaining"), std::to_string(limit - 1));

    const auto head_allowed = client.request("HEAD", "/v1/auth", "", original);
    EXPECT_EQ(head_allowed.status, 200);
    EXPECT_EQ(head_allowed.header("x-ratelimit-remaining"), std::to_string(limit - 2));
    EXPECT_EQ(head_allowed.header("content-length"), "0");

    for (int i = 2; i < limit; ++i) ASSERT_EQ(client.request("HEAD", "/v1/auth", "", original).status, 200);
    const auto denied = client.get("/v1/auth", original);
    EXPECT_EQ(denied.status, 429);
    EXPECT_NE(denied.body.find("\"allowed\":false"), std::string::npos) << denied.body;  // Traefik shows it
    const auto head_denied = client.request("HEAD", "/v1/auth", "", original);
    EXPECT_EQ(head_denied.status, 429);
    EXPECT_EQ(head_denied.body, "");
    EXPECT_EQ(head_denied.header("content-length"), "0");
    EXPECT_FALSE(head_denied.header("retry-after").empty());
    EXPECT_EQ(head_denied.header("x-ratelimit-remaining"), "0");
}

}  // namespace
}  // namespace ratelimitd::test::nginx_upstream_reuse_test
