// The issue's LLM case end to end: tokens charged after the response, an email at 80 %. Three
// sidecars on one real redis-server, an HTTPS receiver of the tests' own CA. Tenant acme (plan
// pro: 10,000 tokens per 10 minutes) is charged by POST /v1/report once each answer is known,
// twelve answers of 700 tokens at once over the fleet; a gateway user is charged by Envoy
// Gateway's two-phase call (hits_addend 0 on the request, the tokens at stream end), twelve
// streams of 70 of 1,000 per hour. Each budget's 80 % event arrives once across the fleet, with
// the plan, the window, when and the figures, and docs/examples/usage_receiver.py writes the
// email from it alone.
#include "support/event_schema.hpp"
#include "support/held_window.hpp"
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/run_command.hpp"
#include "support/tls_certs.hpp"
#include "support/wait.hpp"
#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <thread>

namespace ratelimitd::test::grpc_llm_budget_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string secret = "tests-webhook-secret-0123456789";
constexpr int answers = 12;  // 11 x 700 = 7,700 and 11 x 70 = 770: the 12th crosses 80 %

std::string config(const WebhookReceiver& receiver, const TlsCerts& certs) {
    return R"(envoy_denied_calls: charge
policies:
  llm: {algorithm: fixed_window, limit: 1000, window: 600s, max_debt: 1000}
plans:
  pro:
    llm: {limit: 10000, window: 600s, max_debt: 10000}
tenants:
  acme: {plan: pro}
domains:
  - domain: gateway
    descriptors:
      - key: tokens
        rate_limit: {unit: hour, requests_per_unit: 1000}
notify:
  targets:
    mailer: {url: ")" +
           receiver.url() + "\", secret: \"" + secret + "\", timeout: 2s, ca_file: \"" + certs.ca() + R"("}
  policies:
    llm: {at: [0.8], target: mailer}
    gateway.tokens: {at: [0.8], target: mailer}
)";
}

void report_answers_at_once(const std::vector<std::unique_ptr<Ratelimitd>>& fleet, const std::string& tenant) {
    std::vector<std::thread> threads;
    for (int i = 0; i < answers; ++i) {
        threads.emplace_back([&, i] {
            HttpClient client(fleet[static_cast<std::size_t>(i) % fleet.size()]->port());
            const json report{{"policy", "llm"}, {"tenant", tenant}, {"cost", 700}};
            EXPECT_EQ(client.post("/v1/report", report.dump()).status, 200);
        });
    }
    for (auto& t : threads) t.join();
}

void stream_answers_at_once(const std::vector<unsigned short>& grpc_ports, const std::string& user) {
    std::vector<std::thread> threads;
    for (int i = 0; i < answers; ++i) {
        threads.emplace_back([&, i] {
            const RlsClient client(grpc_ports[static_cast<std::size_t>(i) % grpc_ports.size()]);
            const auto phase = [&](std::uint64_t hits) {
                return client.code(rls_request("gateway", {Descriptor{{{"tokens", user}}, hits}}));
            };
            EXPECT_EQ(phase(0), RlsResponse::OK) << "the request phase asks";
            EXPECT_EQ(phase(70), RlsResponse::OK) << "the response phase charges the tokens";
        });
    }
    for (auto& t : threads) t.join();
}

/// docs/examples/usage_receiver.py `check` on one received event: the email it writes.
CommandResult email_of(const ReceivedRequest& r) {
    static int n = 0;
    const std::string body_file = scratch_dir() + "/llm-event-" + std::to_string(n++) + ".json";
    std::ofstream(body_file, std::ios::binary) << r.body;
    return run_command("WEBHOOK_SECRET=" + secret + " python3 " + std::string(RATELIMITD_SOURCE_DIR) +
                       "/docs/examples/usage_receiver.py check " + body_file + " " +
                       shell_quote(r.headers.at("ratelimit-signature")));
}

double sent_by(const std::vector<std::unique_ptr<Ratelimitd>>& fleet) {
    double total = 0;
    for (const auto& s : fleet) {
        HttpClient client(s->port());
        total += std::max(0.0, sample(client.get("/metrics").body, "ratelimitd_notify_sent_total{target=\"mailer\"}"));
    }
    return total;
}

void expect_http_budget_event(const json& e, const ReceivedRequest& r) {
    EXPECT_EQ(e["type"], "threshold");
    EXPECT_EQ(e["plan"], "pro");
    EXPECT_EQ(e["threshold"], 0.8);
    EXPECT_EQ(e["limit"], 10000) << "the plan's budget";
    EXPECT_EQ(e["used"], 8400) << "the 12th answer's 700 tokens took 7,700 to 8,400";
    EXPECT_EQ(e["window"], (json{{"name", "llm"}, {"seconds", 600}}));
    const CommandResult email = email_of(r);
    EXPECT_EQ(email.status, 0) << email.output;
    EXPECT_EQ(email.output.rfind("Subject: acme has used 80% of its pro plan (llm)\n\n"
                                 "acme reached 8400 of 10000 llm units (80%) in its 10-minute window (llm) at ",
                                 0),
              0u)
        << email.output;
}

void expect_gateway_event(const json& e, const ReceivedRequest& r, const std::string& user) {
    EXPECT_EQ(e["type"], "threshold");
    EXPECT_EQ(e["policy"], "gateway.tokens");
    EXPECT_EQ(e["plan"], nullptr) << "a domain rule has no plan";
    EXPECT_EQ(e["limit"], 1000);
    EXPECT_EQ(e["used"], 840) << "the 12th stream's 70 tokens took 770 to 840";
    EXPECT_EQ(e["window"]["seconds"], 3600);
    EXPECT_GE(e["crossed_at"].get<std::int64_t>(), e["window_start"].get<std::int64_t>()) << e.dump();
    EXPECT_LT(e["crossed_at"].get<std::int64_t>(), e["window_end"].get<std::int64_t>()) << e.dump();
    const CommandResult email = email_of(r);
    EXPECT_EQ(email.status, 0) << email.output;
    EXPECT_EQ(email.output.rfind("Subject: " + user + " has used 80% of its plan (gateway.tokens)\n\n" + user +
                                     " reached 840 of 1000 gateway.tokens units (80%) in its hour window",
                                 0),
              0u)
        << email.output;
}

TEST(GrpcLlmBudget, TokensChargedAfterTheResponseSendTheEightyPercentEmailOnceAcrossTheFleetOverHttps) {
    TlsCerts certs;
    in_one_window(1h, [&](int attempt) {
        RedisServer redis;
        WebhookReceiver receiver(certs.server());
        std::vector<std::unique_ptr<Ratelimitd>> fleet;
        std::vector<unsigned short> grpc_ports;
        for (int i = 0; i < 3; ++i) {
            auto& s = fleet.emplace_back(std::make_unique<Ratelimitd>(config(receiver, certs), redis.url(),
                                                                      std::vector<std::string>{"--grpc-listen", "127.0.0.1:0"}));
            grpc_ports.push_back(grpc_port_from_log(s->process().wait_for_log("grpc listening on", process_start_bound)));
        }
        const std::string user = "user" + std::to_string(attempt);
        report_answers_at_once(fleet, "acme");
        stream_answers_at_once(grpc_ports, user);
        ASSERT_TRUE(wait_until([&] { return sent_by(fleet) >= 2; }, 30s)) << sent_by(fleet);
        // A fresh tenant's crossing on each sidecar (900 of the policy's own 1,000), queued
        // after the answers there, tells when a second event of theirs would be in.
        for (std::size_t i = 0; i < fleet.size(); ++i) {
            HttpClient client(fleet[i]->port());
            const json late{{"policy", "llm"}, {"tenant", "late" + std::to_string(i)}, {"cost", 900}};
            EXPECT_EQ(client.post("/v1/report", late.dump()).status, 200);
        }
        ASSERT_TRUE(wait_until([&] { return sent_by(fleet) >= 5; }, 30s)) << sent_by(fleet);
        EXPECT_EQ(receiver.count(), 5u);
        std::map<std::string, std::pair<json, ReceivedRequest>> by_tenant;
        for (const auto& r : receiver.requests()) {
            const json e = json::parse(r.body);
            EXPECT_TRUE(by_tenant.emplace(e["tenant"].get<std::string>(), std::pair{e, r}).second) << "twice: " << e.dump();
        }
        ASSERT_EQ(by_tenant.count("acme"), 1u);
        ASSERT_EQ(by_tenant.count(user), 1u);
        expect_http_budget_event(by_tenant["acme"].first, by_tenant["acme"].second);
        expect_gateway_event(by_tenant[user].first, by_tenant[user].second, user);
        EXPECT_EQ(schema_failures(receiver.requests()), "");
    });
}

}  // namespace
}  // namespace ratelimitd::test::grpc_llm_budget_test
