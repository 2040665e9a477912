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

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>

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

double sent_by(const std::vector<std::unique_ptr<Ratelimitd>>& fleet) {
    double total = 0;
    for (const auto& s : fleet) total += std::max(0.0, metric(*s, "ratelimitd_notify_sent_total{target=\"ops\"}"));
    return total;
}

/// 30 reports of 3 units and 30 checks for each of `tenants`, all at once, spread over `fleet`.
void reports_and_checks_at_once(const std::vector<std::unique_ptr<Ratelimitd>>& fleet,
                                 const std::vector<std::string>& tenants) {
    const int calls = 60 * static_cast<int>(tenants.size());
    std::atomic<int> next{0};
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < 4 * fleet.size(); ++c) {
        threads.emplace_back([&, c] {
            HttpClient client(fleet[c % fleet.size()]->port());
            for (int n; (n = next.fetch_add(1)) < calls;) {
                const std::string& tenant = tenants[static_cast<std::size_t>(n) % tenants.size()];
                const bool report = n / static_cast<int>(tenants.size()) % 2 == 0;
                json body{{"policy", "llm"}, {"tenant", tenant}};
                if (report) body["cost"] = 3;
                const int status = client.post(report ? "/v1/report" : "/v1/check", body.dump()).status;
                EXPECT_TRUE(status == 200 || (!report && status == 429)) << status;
            }
        });
    }
    for (auto& t : threads) t.join();
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

// The fleet: an HTTPS receiver of the tests' own CA behind three sidecars on one real
// Redis. Two tenants on plan pro (100 per 10 minutes; the policy's own limit is 50) each get 30
// reports of 3 units and 30 checks at once: whatever their order, usage passes 80 and goes past
// 100 (the reports alone charge 90, the checks are admitted up to the limit, then a report goes
// past it or a check is denied). Exactly one event per tenant and threshold, each naming the
// plan, the window and when it crossed.
TEST(NotifyHttps, ThreeSidecarsOnOneRedisSendOneEventPerThresholdOfThePlanOverHttps) {
    TlsCerts certs;
    WebhookReceiver receiver(certs.server());
    RedisServer redis;
    const std::string config = "policies:\n  llm: {algorithm: fixed_window, limit: 50, window: 600s, max_debt: 100}\n"
                               "plans:\n  pro:\n    llm: {limit: 100, window: 600s, max_debt: 100}\n"
                               "tenants:\n  acme: {plan: pro}\n  globex: {plan: pro}\n"
                               "notify:\n  targets:\n    ops: {url: \"" + receiver.url() + "\", secret: \"" + secret +
                               "\", timeout: 2s, ca_file: \"" + certs.ca() + "\"}\n"
                               "  policies:\n    llm: {at: [0.8, 1.0], target: ops}\n";
    std::vector<std::unique_ptr<Ratelimitd>> fleet;
    for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Ratelimitd>(config, redis.url()));
    reports_and_checks_at_once(fleet, {"acme", "globex"});
    ASSERT_TRUE(wait_until([&] { return sent_by(fleet) >= 4; }, 30s)) << sent_by(fleet);
    EXPECT_EQ(receiver.count(), 4u);
    EXPECT_EQ(receiver.failed_handshakes(), 0u);
    std::map<std::pair<std::string, double>, json> events;
    for (const auto& r : receiver.requests()) {
        const json e = json::parse(r.body);
        EXPECT_TRUE(events.emplace(std::pair{e["tenant"].get<std::string>(), e["threshold"].get<double>()}, e).second)
            << "twice: " << e.dump();
    }
    ASSERT_EQ(events.size(), 4u);
    for (const std::string tenant : {"acme", "globex"}) {
        SCOPED_TRACE(tenant);
        const json& eighty = events.at({tenant, 0.8});
        const json& full = events.at({tenant, 1.0});
        for (const json* e : {&eighty, &full}) {
            EXPECT_EQ((*e)["type"], "threshold");
            EXPECT_EQ((*e)["plan"], "pro");
            EXPECT_EQ((*e)["limit"], 100) << "the plan's limit, not the policy's 50";
            EXPECT_EQ((*e)["window"], (json{{"name", "llm"}, {"seconds", 600}}));
            EXPECT_GE((*e)["crossed_at"].get<std::int64_t>(), (*e)["window_start"].get<std::int64_t>());
            EXPECT_LT((*e)["crossed_at"].get<std::int64_t>(), (*e)["window_end"].get<std::int64_t>());
        }
        EXPECT_GE(eighty["used"].get<int>(), 80);
        EXPECT_LE(eighty["used"].get<int>(), 82) << "the charge that crossed 80 was 3 units at most";
        EXPECT_EQ(eighty["window_end"], full["window_end"]) << "one window links the 80 % and the 100 % events";
        EXPECT_NE(eighty["id"], full["id"]);
    }
    EXPECT_EQ(schema_failures(receiver.requests()), "");
}

}  // namespace
}  // namespace ratelimitd::test::notify_https_test
