// Quota webhooks on every way usage is charged over HTTP: POST /v1/report crosses thresholds as
// checks do, under the same markers, so that concurrent reports and checks from three sidecars
// on one real Redis send one event per (tenant, threshold, window); the case (two
// reports from 0 to 1,400 of 1,000 with at: [0.5]) sends its event on both stores, and a
// refund that takes usage back below a threshold re-arms it only in a new window.
#include "support/event_schema.hpp"
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/run_command.hpp"
#include "support/wait.hpp"
#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <tuple>

namespace ratelimitd::test::notify_usage_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string config_for(const WebhookReceiver& receiver, const std::string& policies, const std::string& rules) {
    return "policies:\n" + policies + "notify:\n  targets:\n    ops: {url: \"" + receiver.url() +
           "\", secret: \"tests-webhook-secret-0123456789\", timeout: 2s}\n  policies:\n" + rules;
}

double sent(const std::vector<std::unique_ptr<Ratelimitd>>& fleet) {
    double total = 0;
    for (const auto& s : fleet) {
        HttpClient client(s->port());
        total += std::max(0.0, sample(client.get("/metrics").body, "ratelimitd_notify_sent_total{target=\"ops\"}"));
    }
    return total;
}

HttpResponse report(HttpClient& c, const std::string& policy, const std::string& tenant, int cost) {
    return c.post("/v1/report", json{{"policy", policy}, {"tenant", tenant}, {"cost", cost}}.dump());
}

HttpResponse check(HttpClient& c, const std::string& policy, const std::string& tenant) {
    return c.post("/v1/check", json{{"policy", policy}, {"tenant", tenant}}.dump());
}

// A fixed window of 100 per 10 minutes opened by the first call: 30 reports of 3 units and 30
// checks per tenant at once, spread over the fleet. Whatever their order the usage passes 80
// and reaches 100 (the reports alone charge 90, the checks are admitted up to the limit).
TEST(NotifyUsage, ReportsAndChecksFromThreeSidecarsOnOneRedisCrossEachThresholdOnce) {
    RedisServer redis;
    WebhookReceiver receiver;
    const std::string config =
        config_for(receiver, "  llm: {algorithm: fixed_window, limit: 100, window: 600s, max_debt: 100}\n",
                   "    llm: {at: [0.8, 1.0], target: ops}\n");
    std::vector<std::unique_ptr<Ratelimitd>> fleet;
    for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Ratelimitd>(config, redis.url()));
    const std::vector<std::string> tenants{"acme", "globex"};
    constexpr int calls_per_tenant = 60;  // 30 reports, 30 checks
    std::atomic<int> next{0};
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < 4 * fleet.size(); ++c) {
        threads.emplace_back([&, c] {
            HttpClient client(fleet[c % fleet.size()]->port());
            for (int n; (n = next.fetch_add(1)) < calls_per_tenant * 2;) {
                const std::string& tenant = tenants[static_cast<std::size_t>(n) % 2];
                if (n / 2 % 2 == 0) {
                    EXPECT_EQ(report(client, "llm", tenant, 3).status, 200);
                } else {
                    const int status = check(client, "llm", tenant).status;
                    EXPECT_TRUE(status == 200 || status == 429) << status;
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    ASSERT_TRUE(wait_until([&] { return sent(fleet) >= 4; }, 30s));
    std::set<std::tuple<std::string, double>> seen;
    for (const auto& r : receiver.requests()) {
        const json e = json::parse(r.body);
        EXPECT_EQ(e["type"], "threshold");
        EXPECT_EQ(e["limit"], 100);
        EXPECT_TRUE(seen.emplace(e["tenant"].get<std::string>(), e["threshold"].get<double>()).second) << e.dump();
    }
    EXPECT_EQ(seen, (std::set<std::tuple<std::string, double>>{{"acme", 0.8}, {"acme", 1.0}, {"globex", 0.8},
                                                                {"globex", 1.0}}));
    EXPECT_EQ(receiver.count(), 4u);
    EXPECT_EQ(schema_failures(receiver.requests()), "");
}

// The LLM case: tokens charged after the response, an email at half the budget.
TEST(NotifyUsage, TwoReportsPastTheLimitSendTheHalfwayEventOnceAndARefundReArmsNothing) {
    RedisServer redis;
    for (const std::string& store : {redis.url(), std::string()}) {
        SCOPED_TRACE(store.empty() ? "embedded" : "redis");
        WebhookReceiver receiver;
        std::vector<std::unique_ptr<Ratelimitd>> one;
        one.push_back(std::make_unique<Ratelimitd>(
            config_for(receiver, "  llm: {algorithm: fixed_window, limit: 1000, window: 600s, max_debt: 1000}\n",
                       "    llm: {at: [0.5], target: ops}\n"),
            store));
        HttpClient client(one.front()->port());
        EXPECT_EQ(report(client, "llm", "acme", 700).status, 200);
        EXPECT_EQ(report(client, "llm", "acme", 700).status, 200);
        ASSERT_TRUE(wait_until([&] { return sent(one) >= 1; }, 20s));
        const json e = json::parse(receiver.requests().front().body);
        EXPECT_EQ(e["threshold"], 0.5);
        EXPECT_EQ(e["tenant"], "acme");
        EXPECT_EQ(e["used"], 700) << "the report that crossed it took usage to 700";
        EXPECT_EQ(e["window"], (json{{"name", "llm"}, {"seconds", 600}}));
        // The end rounded up, the start down: 600 s apart, or 601 when the end is not a whole second.
        const std::int64_t span = e["window_end"].get<std::int64_t>() - e["window_start"].get<std::int64_t>();
        EXPECT_GE(span, 600);
        EXPECT_LE(span, 601);
        EXPECT_EQ(e["plan"], nullptr) << "acme has no plan";
        // Back below 500 by a refund, then past it again in the same window: no second event.
        EXPECT_EQ(report(client, "llm", "acme", -1200).status, 200);
        EXPECT_EQ(report(client, "llm", "acme", 600).status, 200);
        // Another tenant's crossing, queued after those reports, tells when theirs would be in.
        EXPECT_EQ(report(client, "llm", "globex", 500).status, 200);
        ASSERT_TRUE(wait_until([&] { return sent(one) >= 2; }, 20s));
        EXPECT_EQ(receiver.count(), 2u);
        EXPECT_EQ(json::parse(receiver.requests().back().body)["tenant"], "globex");
        EXPECT_EQ(schema_failures(receiver.requests()), "");
    }
}

// What an email needs: the tenant's plan, the window that crossed in a multi-window policy, when.
// pro's acme at 8 of its 10 per minute (the hour's 16 not at 80 %), globex (no plan) at 4 of 5.
TEST(NotifyUsage, AnEventNamesThePlanAndTheWindowThatCrossedAndWhen) {
    RedisServer redis;
    WebhookReceiver receiver;
    const std::string policies = "  tiered:\n    algorithm: fixed_window\n"
                                 "    windows: [{limit: 5, window: 60s}, {limit: 8, window: 1h}]\n"
                                 "plans:\n  pro:\n"
                                 "    tiered: {windows: [{limit: 10, window: 60s}, {limit: 16, window: 1h}]}\n"
                                 "tenants:\n  acme: {plan: pro}\n";
    std::vector<std::unique_ptr<Ratelimitd>> one;
    one.push_back(std::make_unique<Ratelimitd>(config_for(receiver, policies, "    tiered: {at: [0.8], target: ops}\n"),
                                               redis.url()));
    HttpClient client(one.front()->port());
    for (int i = 0; i < 8; ++i) EXPECT_EQ(check(client, "tiered", "acme").status, 200);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(check(client, "tiered", "globex").status, 200);
    ASSERT_TRUE(wait_until([&] { return sent(one) >= 2; }, 20s));
    std::map<std::string, json> by_tenant;
    for (const auto& r : receiver.requests()) by_tenant[json::parse(r.body)["tenant"].get<std::string>()] = json::parse(r.body);
    ASSERT_EQ(by_tenant.size(), 2u);
    const json& acme = by_tenant["acme"];
    EXPECT_EQ(acme["plan"], "pro");
    EXPECT_EQ(acme["window"]["seconds"], 60) << acme.dump();
    EXPECT_EQ(acme["limit"], 10);
    EXPECT_EQ(acme["used"], 8);
    EXPECT_EQ(by_tenant["globex"]["plan"], nullptr);
    EXPECT_EQ(by_tenant["globex"]["limit"], 5);
    EXPECT_EQ(by_tenant["globex"]["used"], 4);
    EXPECT_EQ(by_tenant["globex"]["window"], acme["window"]) << "the same window of the same policy";
    EXPECT_NE(by_tenant["globex"]["id"], acme["id"]);
    for (const auto& [tenant, e] : by_tenant) {
        EXPECT_EQ(e["window"]["name"].get<std::string>().rfind("tiered-", 0), 0u) << e.dump();
        // The store's clock at the claim: within the window (the validator checks it too).
        EXPECT_GE(e["crossed_at"].get<std::int64_t>(), e["window_start"].get<std::int64_t>());
        EXPECT_LT(e["crossed_at"].get<std::int64_t>(), e["window_end"].get<std::int64_t>());
    }
    EXPECT_EQ(schema_failures(receiver.requests()), "");
}

// docs/examples/usage_receiver.py, the receiver the docs offer, on a real event: it verifies the
// signature and writes the email from the event alone; a body changed in transit is refused.
TEST(NotifyUsage, TheDocsReceiverExampleVerifiesARealEventAndWritesItsEmail) {
    WebhookReceiver receiver;
    std::vector<std::unique_ptr<Ratelimitd>> one;
    one.push_back(std::make_unique<Ratelimitd>(
        config_for(receiver,
                   "  llm: {algorithm: fixed_window, limit: 100, window: 600s}\n"
                   "plans:\n  pro:\n    llm: {limit: 1000, window: 600s}\ntenants:\n  acme: {plan: pro}\n",
                   "    llm: {at: [0.8], target: ops}\n"),
        ""));
    HttpClient client(one.front()->port());
    EXPECT_EQ(report(client, "llm", "acme", 850).status, 200);
    ASSERT_TRUE(wait_until([&] { return sent(one) >= 1; }, 20s));
    const ReceivedRequest r = receiver.requests().front();
    const std::string body_file = scratch_dir() + "/usage-event.json";
    const auto run_example = [&](const std::string& body) {
        std::ofstream(body_file, std::ios::binary) << body;
        return run_command("WEBHOOK_SECRET=tests-webhook-secret-0123456789 python3 " +
                           std::string(RATELIMITD_SOURCE_DIR) + "/docs/examples/usage_receiver.py check " + body_file +
                           " " + shell_quote(r.headers.at("ratelimit-signature")));
    };
    const CommandResult email = run_example(r.body);
    EXPECT_EQ(email.status, 0) << email.output;
    EXPECT_EQ(email.output.rfind("Subject: acme has used 80% of its pro plan (llm)\n\n"
                                 "acme reached 850 of 1000 llm units (80%) in its 10-minute window (llm) at ",
                                 0),
              0u)
        << email.output;
    EXPECT_NE(email.output.find("(event " + json::parse(r.body)["id"].get<std::string>() + ")"), std::string::npos);
    std::string tampered = r.body;
    tampered.replace(tampered.find("\"used\":850"), 10, "\"used\":851");
    const CommandResult refused = run_example(tampered);
    EXPECT_EQ(refused.status, 1) << refused.output;
    EXPECT_NE(refused.output.find("signature does not verify"), std::string::npos) << refused.output;
}

}  // namespace
}  // namespace ratelimitd::test::notify_usage_test
