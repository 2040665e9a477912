// No secret leaks: with the admin token, the hash secret and a Redis password set, debug
// logging and every check in the access log, API keys and bearer tokens sent through
// /v1/auth (allowed, denied and malformed), and admin calls with wrong tokens, none of the
// secrets appears in the log (text or JSON), /metrics, any response, or any Redis key.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/raw_connection.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <map>
#include <string>
#include <vector>

namespace ratelimitd::test::secret_leaks_test {
namespace {

using namespace std::chrono_literals;

const std::string admin_token = "adm1n-T0ken-must-not-leak-5f3a9c";
const std::string hash_secret = "hash-S3cret-must-not-leak-8e2d71";
const std::string redis_password = "redis-Passw0rd-must-not-leak-c4b1";
const std::string wrong_redis_password = "wrong-Passw0rd-must-not-leak-0d9e";
const std::string api_key = "sk_live_ApiKey-must-not-leak-77aa";
const std::string bearer_token = "tok_Bearer-must-not-leak-19fe";

// Each secret, and a distinctive prefix of it (a truncated copy is a leak too).
std::vector<std::string> needles() {
    std::vector<std::string> out;
    for (const std::string& s :
         std::vector<std::string>{admin_token, hash_secret, redis_password, wrong_redis_password, api_key, bearer_token}) {
        out.push_back(s);
        out.push_back(s.substr(0, 12));
    }
    return out;
}

const char* const config = R"(
policies:
  per-key: { algorithm: fixed_window, limit: 3, window: 60s }
  per-ip: { algorithm: token_bucket, limit: 100, window: 60s }
  checks: { algorithm: sliding_log, limit: 2, window: 60s }
identity:
  - { name: api_key, header: X-Api-Key, hash: true }
  - { name: bearer, header: Authorization, hash: true }
  - { client_ip: true }
routes:
  - path: "/api/*"
    limits: [ { policy: per-key, identity: api_key }, { policy: per-ip, identity: client_ip } ]
  - { path: "/v1/*", policy: per-key }
)";

/// Everything a response shows a client, as one text.
std::string shown(const HttpResponse& r) {
    std::string out = std::to_string(r.status) + "\n";
    for (const auto& [k, v] : r.headers) out += k + ": " + v + "\n";
    return out + r.body;
}

/// Every response the test received, as the client saw it.
struct Responses {
    std::string text;
    HttpResponse keep(HttpResponse r) {
        text += shown(r) + "\n";
        return r;
    }
};

// An API key sent nginx style (the original URI in a header), and a bearer token.
const std::map<std::string, std::string> with_key{{"X-Original-URI", "/api/orders"}, {"X-Api-Key", api_key}};
const std::map<std::string, std::string> with_bearer{{"X-Original-URI", "/v1/items"},
                                                     {"Authorization", "Bearer " + bearer_token}};

/// API keys and bearer tokens through /v1/auth: allowed, then denied; nginx and Envoy style.
void authorize_with_the_secrets(HttpClient& c, Responses& seen) {
    int allowed = 0, denied = 0;
    for (int i = 0; i < 5; ++i) {
        for (const auto& headers : {with_key, with_bearer}) {
            const int status = seen.keep(c.get("/v1/auth", headers)).status;
            allowed += status == 200 ? 1 : 0;
            denied += status == 429 ? 1 : 0;
        }
    }
    EXPECT_EQ(allowed, 6);  // 3 per identity
    EXPECT_EQ(denied, 4);
    seen.keep(c.get("/v1/auth/api/envoy-style", {{"X-Api-Key", api_key}}));
    seen.keep(c.get("/v1/auth", {{"X-Original-URI", "/v1/x"}, {"Authorization", "bearer   " + bearer_token}}));
    seen.keep(c.get("/v1/auth", {{"X-Original-URI", "/v1/x"}, {"Authorization", "Basic " + api_key}}));
}

/// Failing requests that carry the secrets, malformed ones on raw connections.
void fail_requests_that_carry_the_secrets(HttpClient& c, unsigned short port, Responses& seen) {
    seen.keep(c.post("/v1/check", "{not json", {{"X-Api-Key", api_key}, {"Authorization", "Bearer " + bearer_token}}));
    seen.keep(c.post("/v1/check", R"({"policy":"nope","tenant":"t"})", {{"X-Api-Key", api_key}}));
    seen.keep(c.get("/v1/auth?deny_status=999", with_key));
    seen.keep(c.get("/v1/auth", {{"X-Original-URI", "/v1/x"}, {"X-Forwarded-Uri", "/v1/y"}, {"X-Api-Key", api_key}}));
    seen.keep(c.get("/nowhere", {{"Authorization", "Bearer " + admin_token}}));
    for (const std::string& bad : {"GET /v1/auth HTTP/1.1\r\nX-Api-Key: " + api_key + "\r\nthis is not a header\r\n\r\n",
                                   "GET /v1/auth HTTP/1.1\r\nX-Api-Key: " + api_key + std::string(17 * 1024, 'k') +
                                       "\r\n\r\n"}) {
        RawConnection raw(port);
        raw.send(bad);
        try {
            seen.keep(raw.read_response(5s));
        } catch (const std::runtime_error&) {
            // The server may reset a connection it stopped reading; nothing shown, nothing leaked.
        }
    }
}

/// Admin calls with wrong tokens (some containing the real one), then the right one.
void call_the_admin_doors(HttpClient& c, Responses& seen) {
    for (const std::string& authorization :
         {"Bearer " + admin_token + "x", "Bearer " + admin_token.substr(0, admin_token.size() - 1), admin_token,
          "Basic " + admin_token, "Bearer " + api_key}) {
        EXPECT_EQ(seen.keep(c.get("/v1/policies", {{"Authorization", authorization}})).status, 401);
        EXPECT_EQ(
            seen.keep(c.post("/v1/reset", R"({"policy":"per-key","tenant":"t"})", {{"Authorization", authorization}}))
                .status,
            401);
    }
    const std::map<std::string, std::string> as_admin{{"Authorization", "Bearer " + admin_token}};
    EXPECT_EQ(seen.keep(c.get("/v1/policies", as_admin)).status, 200);
    EXPECT_EQ(seen.keep(c.get("/v1/peek?policy=per-key&tenant=t", as_admin)).status, 200);
    EXPECT_EQ(seen.keep(c.post("/v1/check", R"({"policy":"checks","tenant":"plain"})")).status, 200);
}

/// A second instance with a wrong Redis password: its failures are logged too. Returns its log.
std::string log_of_a_wrong_redis_password(const RedisServer& redis, const std::string& log_format, Responses& seen) {
    const std::string wrong_url = "redis://:" + wrong_redis_password + "@127.0.0.1:" + std::to_string(redis.port());
    Ratelimitd wrong(config, "", {"--log-level", "debug", "--log-format", log_format},
                     {"RATELIMITD_REDIS_URL=" + wrong_url, "RATELIMITD_HASH_SECRET=" + hash_secret});
    HttpClient w(wrong.port());
    seen.keep(w.get("/v1/auth", with_key));
    seen.keep(w.get("/readyz"));
    wrong.process().signal(SIGTERM);
    EXPECT_EQ(wrong.process().wait(6s), 0);
    return wrong.process().log();
}

/// Every key the checks wrote, with its value as DUMP shows it.
std::string redis_contents(const RedisServer& redis) {
    std::string out;
    const auto keys = redis.keys();
    EXPECT_GE(keys.size(), 3u) << "the checks wrote keys";
    for (const auto& k : keys) out += k + "\n" + redis.command({"DUMP", k}) + "\n";
    return out;
}

class SecretLeaks : public ::testing::TestWithParam<std::string> {};

TEST_P(SecretLeaks, NoSecretAppearsInLogsMetricsResponsesOrRedisKeys) {
    RedisServer redis(redis_password);
    Ratelimitd server(config, "", {"--log-level", "debug", "--access-log", "all", "--log-format", GetParam()},
                      {"RATELIMITD_ADMIN_TOKEN=" + admin_token, "RATELIMITD_HASH_SECRET=" + hash_secret,
                       "RATELIMITD_REDIS_URL=" + redis.url()});
    Responses seen;
    HttpClient c(server.port());
    authorize_with_the_secrets(c, seen);
    fail_requests_that_carry_the_secrets(c, server.port(), seen);
    call_the_admin_doors(c, seen);
    const HttpResponse metrics = seen.keep(c.get("/metrics"));
    ASSERT_EQ(metrics.status, 200);
    const std::string wrong_log = log_of_a_wrong_redis_password(redis, GetParam(), seen);

    server.process().signal(SIGTERM);
    ASSERT_EQ(server.process().wait(6s), 0);
    const std::string log = server.process().log();
    // The log was there to leak into: debug lines and one access line per check, with hashes.
    EXPECT_NE(log.find("settings:"), std::string::npos) << log;
    // JSON lines carry the access line's fields as members (issue 24), text lines as key=value.
    EXPECT_TRUE(log.find("tenant=key:") != std::string::npos || log.find("\"tenant\":\"key:") != std::string::npos)
        << log;
    EXPECT_NE(wrong_log.find("127.0.0.1:" + std::to_string(redis.port())), std::string::npos) << wrong_log;
    const std::string redis_text = redis_contents(redis);

    const std::string& responses = seen.text;
    for (const std::string& secret : needles()) {
        EXPECT_EQ(log.find(secret), std::string::npos) << "log holds \"" << secret << "\":\n" << log;
        EXPECT_EQ(wrong_log.find(secret), std::string::npos) << "log holds \"" << secret << "\":\n" << wrong_log;
        EXPECT_EQ(metrics.body.find(secret), std::string::npos) << "/metrics holds \"" << secret << "\"";
        EXPECT_EQ(responses.find(secret), std::string::npos) << "a response holds \"" << secret << "\":\n" << responses;
        EXPECT_EQ(redis_text.find(secret), std::string::npos) << "Redis holds \"" << secret << "\"";
    }
}

INSTANTIATE_TEST_SUITE_P(LogFormats, SecretLeaks, ::testing::Values("text", "json"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ratelimitd::test::secret_leaks_test
