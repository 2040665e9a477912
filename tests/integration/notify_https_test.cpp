// Quota webhooks to https:// targets: the receiver's certificate is verified, chain and name,
// against the target's ca_file (the system's CAs without one). The tests' own HTTPS receiver
// serves a certificate of a test CA made by openssl for this run: a target trusting that CA
// gets its events, signed as over plain HTTP; one trusting another CA refuses the receiver at
// the handshake, sends nothing, and counts the event failed once its retries are spent.
#include "support/event_schema.hpp"
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/tls_certs.hpp"
#include "support/wait.hpp"
#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdio>

namespace ratelimitd::test::notify_https_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string secret = "tests-webhook-secret-0123456789";

std::string hmac_hex(const std::string& message) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, &n);
    std::string hex;
    for (unsigned int i = 0; i < n; ++i) {
        char two[3];
        std::snprintf(two, sizeof two, "%02x", digest[i]);
        hex += two;
    }
    return hex;
}

double metric(const Ratelimitd& s, const std::string& series) {
    HttpClient client(s.port());
    return sample(client.get("/metrics").body, series);
}

TEST(NotifyHttps, DeliveredWithTheRightCaAndRefusedAndCountedWithAWrongOne) {
    TlsCerts certs;
    WebhookReceiver receiver(certs.server());
    RedisServer redis;
    const std::string target_fields = "url: \"" + receiver.url() + "\", secret: \"" + secret + "\", timeout: 2s";
    Ratelimitd sidecar("policies:\n"
                       "  a: {algorithm: fixed_window, limit: 1, window: 600s}\n"
                       "  b: {algorithm: fixed_window, limit: 1, window: 600s}\n"
                       "notify:\n  targets:\n"
                       "    trusted: {" + target_fields + ", ca_file: \"" + certs.ca() + "\"}\n"
                       "    wrong_ca: {" + target_fields + ", ca_file: \"" + certs.other_ca() + "\"}\n"
                       "  policies:\n"
                       "    a: {at: [1.0], target: trusted}\n"
                       "    b: {at: [1.0], target: wrong_ca}\n",
                       redis.url());
    HttpClient client(sidecar.port());
    for (const char* policy : {"a", "b"}) {
        EXPECT_EQ(client.post("/v1/check", json{{"policy", policy}, {"tenant", "acme"}}.dump()).status, 200);
        EXPECT_EQ(client.post("/v1/check", json{{"policy", policy}, {"tenant", "acme"}}.dump()).status, 429);
    }
    ASSERT_TRUE(wait_until([&] { return metric(sidecar, "ratelimitd_notify_sent_total{target=\"trusted\"}") >= 1; },
                           20s));
    // Six attempts with backoff from 200 ms: about 6 s before the event is given up.
    ASSERT_TRUE(wait_until(
        [&] { return metric(sidecar, "ratelimitd_notify_failed_total{target=\"wrong_ca\"}") >= 1; }, 40s));
    EXPECT_EQ(metric(sidecar, "ratelimitd_notify_failed_total{target=\"wrong_ca\"}"), 1);
    EXPECT_LE(metric(sidecar, "ratelimitd_notify_sent_total{target=\"wrong_ca\"}"), 0) << "none sent (or no series)";
    EXPECT_EQ(metric(sidecar, "ratelimitd_notify_failed_total{target=\"trusted\"}"), 0);
    EXPECT_EQ(receiver.failed_handshakes(), 6u) << "every attempt refused the receiver at the handshake";
    ASSERT_EQ(receiver.count(), 1u) << "only the trusted target's event got through";
    const ReceivedRequest r = receiver.requests().front();
    EXPECT_EQ(json::parse(r.body)["policy"], "a");
    const std::string sig = r.headers.at("ratelimit-signature");
    const auto comma = sig.find(",v1=");
    ASSERT_NE(comma, std::string::npos) << sig;
    EXPECT_EQ(sig.substr(comma + 4), hmac_hex(sig.substr(2, comma - 2) + "." + r.body)) << "signed as over HTTP";
    EXPECT_EQ(schema_failures({r}), "");
    sidecar.stop();
    EXPECT_NE(sidecar.process().log().find("TLS handshake failed"), std::string::npos) << "the log says why";
}

}  // namespace
}  // namespace ratelimitd::test::notify_https_test
