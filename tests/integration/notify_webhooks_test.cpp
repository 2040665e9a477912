// Quota webhooks end to end: three sidecars on one real Redis (and the embedded store) behind
// the tests' own HTTP receiver. Each threshold crossed sends one event per tenant and window
// across the fleet, signed; a receiver that is down gets them once it is back; a full queue
// drops and counts; POST /v1/notify/test is an admin door that touches no store.
#include "support/event_schema.hpp"
#include "support/held_window.hpp"
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"
#include "support/webhook_event_check.hpp"
#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

namespace ratelimitd::test::notify_webhooks_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string secret = "tests-webhook-secret-0123456789";
// The windows the 600 s policies of a refilling algorithm claim their thresholds in: aligned
// to the clock (crossings.lua's notify_window).
constexpr std::chrono::seconds notify_window{600};

std::string config_for(const WebhookReceiver& receiver, const std::string& policies, const std::string& rules) {
    return "policies:\n" + policies + "notify:\n  targets:\n    ops: {url: \"" + receiver.url() + "\", secret: \"" +
           secret + "\", timeout: 2s}\n  policies:\n" + rules;
}

std::int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Checks what every event must be (support/webhook_event_check.hpp), signed with `secret`.
json verified(const ReceivedRequest& r, const std::string& type = "threshold") {
    return verified_event(r, secret, unix_now(), type);
}

double metric(unsigned short port, const std::string& series) {
    HttpClient client(port);
    return sample(client.get("/metrics").body, series);
}

/// Sum of one series over the fleet (-1 counts as 0: no series yet).
double fleet_metric(const std::vector<std::unique_ptr<Ratelimitd>>& fleet, const std::string& series) {
    double total = 0;
    for (const auto& s : fleet) total += std::max(0.0, metric(s->port(), series));
    return total;
}

HttpResponse check(HttpClient& c, const std::string& policy, const std::string& tenant) {
    return c.post("/v1/check", json{{"policy", policy}, {"tenant", tenant}}.dump());
}

/// `per_key` checks of every policy x tenant, spread over the fleet at once (four clients each).
void fire_over(const std::vector<std::unique_ptr<Ratelimitd>>& fleet, const std::vector<std::string>& policies,
               const std::vector<std::string>& tenants, int per_key) {
    std::vector<std::pair<std::string, std::string>> keys;
    for (const auto& p : policies) {
        for (const auto& t : tenants) keys.emplace_back(p, t);
    }
    const int total = per_key * static_cast<int>(keys.size());
    std::atomic<int> next{0};
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < 4 * fleet.size(); ++c) {
        threads.emplace_back([&, c] {
            HttpClient client(fleet[c % fleet.size()]->port());
            for (int n; (n = next.fetch_add(1)) < total;) {
                const auto& [p, t] = keys[static_cast<std::size_t>(n) % keys.size()];
                const auto r = check(client, p, t);
                EXPECT_TRUE(r.status == 200 || r.status == 429) << r.status << " " << r.body;
            }
        });
    }
    for (auto& t : threads) t.join();
}

/// Every event offered by the fleet has been delivered or given up.
bool fleet_settled(const std::vector<std::unique_ptr<Ratelimitd>>& fleet, double expected) {
    return fleet_metric(fleet, "ratelimitd_notify_sent_total{target=\"ops\"}") +
               fleet_metric(fleet, "ratelimitd_notify_failed_total{target=\"ops\"}") >=
           expected;
}

// tb's and sw's denials claim the 1.0 threshold once per aligned 600 s window (their level
// falls back, so their windows are the clock's): a window that began mid-test sends a second
// one on a correct fleet too, and the test runs again (in_one_window).
TEST(NotifyWebhooks, ThreeSidecarsOnOneRedisSendOneSignedEventPerThresholdTenantAndWindow) {
    in_one_window(notify_window, [&](int) {
        RedisServer redis;
        WebhookReceiver receiver;
        const std::string config = config_for(receiver,
                                              "  fw: {algorithm: fixed_window, limit: 20, window: 600s}\n"
                                              "  tb: {algorithm: token_bucket, limit: 20, window: 600s}\n"
                                              "  sw: {algorithm: sliding_window, limit: 20, window: 600s}\n"
                                              "  quiet: {algorithm: fixed_window, limit: 20, window: 600s}\n",
                                              "    fw: {at: [0.8, 1.0], target: ops}\n"
                                              "    tb: {at: [0.8, 1.0], target: ops}\n"
                                              "    sw: {at: [0.8, 1.0], target: ops}\n");
        std::vector<std::unique_ptr<Ratelimitd>> fleet;
        for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Ratelimitd>(config, redis.url()));
        const std::vector<std::string> tenants{"acme", "globex"};
        fire_over(fleet, {"fw", "tb", "sw", "quiet"}, tenants, 60);

        // 3 policies x 2 tenants x 2 thresholds; every event was queued before its check answered.
        ASSERT_TRUE(wait_until([&] { return fleet_settled(fleet, 12); }, 30s));
        EXPECT_EQ(fleet_metric(fleet, "ratelimitd_notify_failed_total{target=\"ops\"}"), 0);
        ASSERT_EQ(receiver.count(), 12u);
        std::set<std::tuple<std::string, std::string, double>> seen;
        std::set<std::string> ids;
        for (const auto& r : receiver.requests()) {
            const json e = verified(r);
            const double threshold = e["threshold"];
            EXPECT_TRUE(seen.emplace(e["policy"].get<std::string>(), e["tenant"].get<std::string>(), threshold).second)
                << "one event each: " << e.dump();
            EXPECT_TRUE(ids.insert(e["id"].get<std::string>()).second);
            EXPECT_EQ(e["scope"], "global");
            EXPECT_EQ(e["limit"], 20);
            EXPECT_EQ(e["used"], threshold == 1.0 ? 20 : 16) << e.dump();
            EXPECT_GT(e["window_end"].get<std::int64_t>(), unix_now());
            EXPECT_LE(e["window_end"].get<std::int64_t>(), unix_now() + 601);
        }
        EXPECT_EQ(seen.size(), 12u);
        EXPECT_EQ(schema_failures(receiver.requests()), "");
        for (auto& s : fleet) {
            s->stop();
            EXPECT_EQ(s->process().log().find(secret), std::string::npos) << "no secret in a log line";
        }
    });
}

HttpResponse report(HttpClient& c, const std::string& policy, const std::string& tenant, int cost) {
    return c.post("/v1/report", json{{"policy", policy}, {"tenant", tenant}, {"cost", cost}}.dump());
}

/// `per_key` reports of `cost` units on every policy x tenant, spread over the fleet at once
/// (four clients per sidecar).
void report_over(const std::vector<Ratelimitd*>& fleet, const std::vector<std::string>& policies,
                 const std::vector<std::string>& tenants, int per_key, int cost) {
    std::vector<std::pair<std::string, std::string>> keys;
    for (const auto& p : policies) {
        for (const auto& t : tenants) keys.emplace_back(p, t);
    }
    const int total = per_key * static_cast<int>(keys.size());
    std::atomic<int> next{0};
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < 4 * fleet.size(); ++c) {
        threads.emplace_back([&, c] {
            HttpClient client(fleet[c % fleet.size()]->port());
            for (int n; (n = next.fetch_add(1)) < total;) {
                const auto& [p, t] = keys[static_cast<std::size_t>(n) % keys.size()];
                const auto r = report(client, p, t, cost);
                EXPECT_EQ(r.status, 200) << r.body;
            }
        });
    }
    for (auto& t : threads) t.join();
}

// Every algorithm that keeps debt, 10 per 10 minutes, at most 100 units in debt; an event when a
// report takes the debt to 40 or past it. "shallow" has the same bound but its reports stay below.
const char* const debt_policies = "  fw: {algorithm: fixed_window, limit: 10, window: 600s, max_debt: 100}\n"
                                  "  tb: {algorithm: token_bucket, limit: 10, window: 600s, max_debt: 100}\n"
                                  "  gc: {algorithm: gcra, limit: 10, window: 600s, max_debt: 100}\n"
                                  "  sw: {algorithm: sliding_window, limit: 10, window: 600s, max_debt: 100}\n"
                                  "  sl: {algorithm: sliding_log, limit: 10, window: 600s, max_debt: 100}\n"
                                  "  shallow: {algorithm: fixed_window, limit: 10, window: 600s, max_debt: 100}\n";
const char* const debt_rules = "    fw: {at: [1.0], debt: 40, target: ops}\n"
                               "    tb: {debt: 40, target: ops}\n"
                               "    gc: {debt: 40, target: ops}\n"
                               "    sw: {debt: 40, target: ops}\n"
                               "    sl: {debt: 40, target: ops}\n"
                               "    shallow: {debt: 40, target: ops}\n";

/// The debt events received: one per (policy, tenant), each checked; `expected` of them. fw's
/// reports also reach its limit, its 1.0 threshold: one such event per tenant.
void expect_one_debt_event_each(const WebhookReceiver& receiver, std::size_t expected, int cost) {
    std::set<std::pair<std::string, std::string>> seen;
    std::set<std::string> limit_reached;
    for (const auto& r : receiver.requests()) {
        if (json::parse(r.body)["type"] == "threshold") {
            const json e = verified(r);
            EXPECT_EQ(e["policy"], "fw");
            EXPECT_EQ(e["threshold"], 1.0);
            EXPECT_TRUE(limit_reached.insert(e["tenant"].get<std::string>()).second) << e.dump();
            continue;
        }
        const json e = verified(r, "debt");
        EXPECT_TRUE(seen.emplace(e["policy"].get<std::string>(), e["tenant"].get<std::string>()).second)
            << "one event each: " << e.dump();
        EXPECT_NE(e["policy"], "shallow") << "its reports never took the debt to the bound";
        EXPECT_EQ(e["scope"], "global");
        EXPECT_EQ(e["limit"], 10);
        EXPECT_EQ(e["bound"], 40);
        // The report that passed the bound: at the bound or past it by less than its own cost.
        EXPECT_GE(e["debt"].get<int>(), 40) << e.dump();
        EXPECT_LT(e["debt"].get<int>(), 40 + cost) << e.dump();
        EXPECT_GT(e["window_end"].get<std::int64_t>(), unix_now());
        EXPECT_LE(e["window_end"].get<std::int64_t>(), unix_now() + 601);
    }
    EXPECT_EQ(seen.size(), expected);
    EXPECT_EQ(limit_reached, (std::set<std::string>{"acme", "globex"}));
}

TEST(NotifyWebhooks, ThreeSidecarsOnOneRedisSendOneSignedDebtEventPerTenantAndWindow) {
    RedisServer redis;
    WebhookReceiver receiver;
    const std::string config = config_for(receiver, debt_policies, debt_rules);
    std::vector<std::unique_ptr<Ratelimitd>> owned;
    std::vector<Ratelimitd*> fleet;
    for (int i = 0; i < 3; ++i) {
        owned.push_back(std::make_unique<Ratelimitd>(config, redis.url()));
        fleet.push_back(owned.back().get());
    }
    const std::vector<std::string> tenants{"acme", "globex"};
    // 30 reports of 7 units per key: 210 units, the limit then 100 units of debt at most.
    report_over(fleet, {"fw", "tb", "gc", "sw", "sl"}, tenants, 30, 7);
    // 6 reports of 7: 32 units of debt, below 40.
    report_over(fleet, {"shallow"}, tenants, 6, 7);
    ASSERT_TRUE(wait_until([&] { return fleet_settled(owned, 12); }, 30s));
    EXPECT_EQ(fleet_metric(owned, "ratelimitd_notify_failed_total{target=\"ops\"}"), 0);
    EXPECT_EQ(receiver.count(), 12u) << "5 policies x 2 tenants, and fw's 1.0 reached by reports";
    expect_one_debt_event_each(receiver, 10, 7);
    // Checks of the indebted tenant are denied: the 1.0 threshold the reports claimed is not
    // sent again for the first denial.
    HttpClient client(fleet[0]->port());
    EXPECT_EQ(check(client, "fw", "acme").status, 429);
    EXPECT_EQ(check(client, "fw", "globex").status, 429);
    // A report that takes a new tenant past its limit on the same sidecar, queued after those
    // denials: once it is delivered, any event of theirs would have been too.
    EXPECT_EQ(report(client, "fw", "initech", 11).status, 200);
    ASSERT_TRUE(wait_until([&] { return fleet_settled(owned, 13); }, 20s));
    ASSERT_EQ(receiver.count(), 13u);
    EXPECT_EQ(json::parse(receiver.requests().back().body)["tenant"], "initech");
    EXPECT_EQ(schema_failures(receiver.requests()), "");
}

TEST(NotifyWebhooks, TheEmbeddedStoreSendsOneDebtEventPerTenantForItsInstance) {
    WebhookReceiver receiver;
    Ratelimitd sidecar(config_for(receiver, debt_policies, debt_rules), "");
    report_over({&sidecar}, {"fw", "tb", "gc", "sw", "sl"}, {"acme", "globex"}, 30, 7);
    report_over({&sidecar}, {"shallow"}, {"acme", "globex"}, 6, 7);
    ASSERT_TRUE(wait_until([&] { return metric(sidecar.port(), "ratelimitd_notify_sent_total{target=\"ops\"}") >= 12; },
                           20s));
    EXPECT_EQ(receiver.count(), 12u);
    expect_one_debt_event_each(receiver, 10, 7);
}

TEST(NotifyWebhooks, TheNextWindowSendsNewEvents) {
    RedisServer redis;
    WebhookReceiver receiver;
    const std::string config = config_for(receiver, "  short: {algorithm: fixed_window, limit: 5, window: 2s}\n",
                                          "    short: {at: [0.8, 1.0], target: ops}\n");
    std::vector<std::unique_ptr<Ratelimitd>> fleet;
    for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Ratelimitd>(config, redis.url()));
    fire_over(fleet, {"short"}, {"acme"}, 12);
    ASSERT_TRUE(wait_until([&] { return receiver.count() >= 2; }, 20s));
    std::int64_t first_end = 0;
    for (const auto& r : receiver.requests()) first_end = std::max(first_end, verified(r)["window_end"].get<std::int64_t>());
    // The window the events named has passed: a new one claims afresh.
    ASSERT_TRUE(wait_until([&] { return unix_now() > first_end; }, 10s, 100ms));
    fire_over(fleet, {"short"}, {"acme"}, 12);
    ASSERT_TRUE(wait_until([&] { return fleet_settled(fleet, 4); }, 20s));
    const auto all = receiver.requests();
    ASSERT_EQ(all.size(), 4u);
    std::map<std::int64_t, std::set<double>> by_window;
    for (const auto& r : all) {
        const json e = verified(r);
        by_window[e["window_end"].get<std::int64_t>()].insert(e["threshold"].get<double>());
    }
    // Two windows, each with its 80 % and its first denial (a burst may straddle a boundary:
    // then each window still has each threshold at most once, and four events in all).
    std::size_t events = 0;
    for (const auto& [end, thresholds] : by_window) events += thresholds.size();
    EXPECT_EQ(events, 4u) << "no threshold twice in one window";
    EXPECT_GE(by_window.size(), 2u);
}

TEST(NotifyWebhooks, AReceiverDownForAWhileGetsTheEventsOnceItIsBack) {
    RedisServer redis;
    WebhookReceiver receiver;
    receiver.down();
    Ratelimitd sidecar(config_for(receiver, "  fw: {algorithm: fixed_window, limit: 4, window: 600s}\n",
                                  "    fw: {at: [0.5, 1.0], target: ops}\n"),
                       redis.url());
    HttpClient client(sidecar.port());
    for (int i = 0; i < 6; ++i) check(client, "fw", "acme");
    // A first attempt failed and a retry is pending: then the receiver comes back.
    ASSERT_TRUE(wait_until([&] { return metric(sidecar.port(), "ratelimitd_notify_retried_total{target=\"ops\"}") >= 2; },
                           20s));
    EXPECT_EQ(receiver.count(), 0u);
    receiver.up();
    ASSERT_TRUE(wait_until([&] { return receiver.count() >= 2; }, 30s)) << "within the retry budget";
    EXPECT_EQ(metric(sidecar.port(), "ratelimitd_notify_sent_total{target=\"ops\"}"), 2);
    EXPECT_EQ(metric(sidecar.port(), "ratelimitd_notify_failed_total{target=\"ops\"}"), 0);
    std::set<double> thresholds;
    for (const auto& r : receiver.requests()) thresholds.insert(verified(r)["threshold"].get<double>());
    EXPECT_EQ(thresholds, (std::set<double>{0.5, 1.0}));
}

TEST(NotifyWebhooks, AFullQueueDropsAndCountsWhileTheCheckStillAnswers) {
    RedisServer redis;
    WebhookReceiver receiver;
    receiver.down();
    Ratelimitd sidecar(config_for(receiver, "  one: {algorithm: fixed_window, limit: 1, window: 600s}\n",
                                  "    one: {at: [1.0], target: ops}\n"),
                       redis.url(), {"--notify-queue", "1"});
    HttpClient client(sidecar.port());
    // 12 tenants, each denied once: 12 events. 4 go in flight (the per-target cap), 1 waits.
    for (int t = 0; t < 12; ++t) {
        EXPECT_EQ(check(client, "one", "t" + std::to_string(t)).status, 200);
        EXPECT_EQ(check(client, "one", "t" + std::to_string(t)).status, 429);
    }
    const double dropped = metric(sidecar.port(), "ratelimitd_notify_dropped_total");
    EXPECT_GE(dropped, 1);
    EXPECT_LE(dropped, 12 - 4 - 1 + 4) << "at most the events beyond the slots and the queue, give or take "
                                           "slots freed meanwhile";
    receiver.up();
    ASSERT_TRUE(wait_until(
        [&] { return metric(sidecar.port(), "ratelimitd_notify_sent_total{target=\"ops\"}") + dropped >= 12; }, 30s));
    EXPECT_EQ(static_cast<double>(receiver.count()), 12 - dropped) << "every event not dropped arrived";
}

TEST(NotifyWebhooks, KeptConnectionsCarryManyEventsAndOnesTheReceiverClosedAreReplaced) {
    RedisServer redis;
    WebhookReceiver receiver;
    receiver.keep_alive(true);
    Ratelimitd sidecar(config_for(receiver, "  one: {algorithm: fixed_window, limit: 1, window: 600s}\n",
                                  "    one: {at: [1.0], target: ops}\n"),
                       redis.url());
    HttpClient client(sidecar.port());
    const auto deny_tenants = [&](int from, int to) {
        for (int t = from; t < to; ++t) {
            EXPECT_EQ(check(client, "one", "t" + std::to_string(t)).status, 200);
            EXPECT_EQ(check(client, "one", "t" + std::to_string(t)).status, 429);
        }
    };
    deny_tenants(0, 20);
    ASSERT_TRUE(wait_until([&] { return receiver.count() >= 20; }, 20s));
    // At most 4 deliveries are in flight at once, each on a kept connection when one is free.
    EXPECT_LT(receiver.connections(), 10u) << "connections kept: far fewer than events";
    // The receiver goes away and comes back: the connections the sender keeps are dead, and each
    // is replaced within the attempt that finds it so (no retry, nothing lost).
    receiver.down();
    receiver.up();
    deny_tenants(20, 30);
    ASSERT_TRUE(wait_until([&] { return receiver.count() >= 30; }, 20s));
    EXPECT_EQ(metric(sidecar.port(), "ratelimitd_notify_sent_total{target=\"ops\"}"), 30);
    EXPECT_EQ(metric(sidecar.port(), "ratelimitd_notify_retried_total{target=\"ops\"}"), 0);
    EXPECT_EQ(metric(sidecar.port(), "ratelimitd_notify_failed_total{target=\"ops\"}"), 0);
    std::set<std::string> tenants;
    for (const auto& r : receiver.requests()) tenants.insert(verified(r)["tenant"].get<std::string>());
    EXPECT_EQ(tenants.size(), 30u);
}

// GCRA's denials claim 1.0 once per aligned 600 s window: again should one begin mid-test.
TEST(NotifyWebhooks, TheEmbeddedStoreSendsOneEventPerThresholdForItsInstance) {
    in_one_window(notify_window, [&](int) {
        WebhookReceiver receiver;
        Ratelimitd sidecar(config_for(receiver, "  gc: {algorithm: gcra, limit: 30, window: 600s}\n",
                                      "    gc: {at: [0.5, 0.9, 1.0], target: ops}\n"),
                           "");
        const Tally tally = fire(sidecar.port(), 60, 8, [](HttpClient& c) { return check(c, "gc", "acme"); });
        EXPECT_EQ(tally.allowed, 30);
        const auto sent = [&] { return metric(sidecar.port(), "ratelimitd_notify_sent_total{target=\"ops\"}"); };
        ASSERT_TRUE(wait_until([&] { return sent() >= 3; }, 20s));
        ASSERT_EQ(receiver.count(), 3u);
        std::multiset<double> thresholds;
        for (const auto& r : receiver.requests()) thresholds.insert(verified(r)["threshold"].get<double>());
        EXPECT_EQ(thresholds, (std::multiset<double>{0.5, 0.9, 1.0}));
    });
}

// A reservation (max_delay) charges as an admit does, so it crosses a threshold like one, on
// Redis as in the embedded store: 7 of 10 taken at once, then 4 more reserved (3 are there,
// the fourth due in 60 s) take the tenant past 90 %.
TEST(NotifyWebhooks, AReservedAdmitCrossesItsThresholdOnBothStores) {
    RedisServer redis;
    for (const std::string& store : {redis.url(), std::string()}) {
        SCOPED_TRACE(store.empty() ? "embedded" : "redis");
        in_one_window(notify_window, [&](int attempt) {
            WebhookReceiver receiver;
            Ratelimitd sidecar(
                config_for(receiver, "  slow: {algorithm: token_bucket, limit: 10, window: 600s, max_delay: 600s}\n",
                           "    slow: {at: [0.9], target: ops}\n"),
                store);
            HttpClient c(sidecar.port());
            const std::string tenant = "t" + std::to_string(attempt);
            const auto charge = [&](int cost) {
                return c.post("/v1/check", json{{"policy", "slow"}, {"tenant", tenant}, {"cost", cost}}.dump());
            };
            const HttpResponse now = charge(7);
            ASSERT_EQ(now.status, 200) << now.body;
            EXPECT_EQ(json::parse(now.body).value("delay_ms", 0), 0);
            const HttpResponse reserved = charge(4);
            ASSERT_EQ(reserved.status, 200) << reserved.body;
            // One token at 10 per 600 s, less the refill of the milliseconds between the checks.
            const int delay = json::parse(reserved.body).value("delay_ms", 0);
            EXPECT_GT(delay, 59'000) << reserved.body;
            EXPECT_LE(delay, 60'000) << reserved.body;
            const auto sent = [&] { return metric(sidecar.port(), "ratelimitd_notify_sent_total{target=\"ops\"}"); };
            ASSERT_TRUE(wait_until([&] { return sent() >= 1; }, 20s)) << "the reservation crossed 0.9";
            ASSERT_EQ(receiver.count(), 1u);
            const json e = verified(receiver.requests().front());
            EXPECT_EQ(e["threshold"], 0.9);
            EXPECT_EQ(e["tenant"], tenant);
        });
    }
}

TEST(NotifyWebhooks, TheTestDoorSendsASignedSampleAndIsAnOperatorsDoorThatTouchesNoStore) {
    RedisServer redis;
    WebhookReceiver receiver;
    const std::string token = "notify-admin-token-0123456789";
    Ratelimitd sidecar(config_for(receiver, "  fw: {algorithm: fixed_window, limit: 5, window: 60s}\n",
                                  "    fw: {at: [1.0], target: ops}\n"),
                       redis.url(), {}, {"RATELIMITD_ADMIN_TOKEN=" + token});
    HttpClient client(sidecar.port());
    const std::map<std::string, std::string> admin{{"Authorization", "Bearer " + token},
                                                   {"Content-Type", "application/json"}};
    const auto evalsha_calls = [&] {
        const std::string stats = redis.command({"INFO", "commandstats"});
        const auto at = stats.find("cmdstat_evalsha:calls=");
        return at == std::string::npos ? 0 : std::stoll(stats.substr(at + 22));
    };
    const auto before = evalsha_calls();

    const auto sent = client.post("/v1/notify/test", R"({"target":"ops"})", admin);
    EXPECT_EQ(sent.status, 200) << sent.body;
    EXPECT_EQ(json::parse(sent.body), (json{{"target", "ops"}, {"delivered", true}, {"status", 200}}));
    ASSERT_EQ(receiver.count(), 1u);
    const json sample = verified(receiver.requests().front());
    EXPECT_EQ(sample["policy"], "sample");
    EXPECT_EQ(schema_failures(receiver.requests()), "");

    const auto no_token = client.post("/v1/notify/test", R"({"target":"ops"})", {{"Content-Type", "application/json"}});
    EXPECT_EQ(no_token.status, 401) << no_token.body;
    const auto unknown = client.post("/v1/notify/test", R"({"target":"pager"})", admin);
    EXPECT_EQ(unknown.status, 400);
    EXPECT_NE(unknown.body.find(R"(target: \"pager\" is not a target under notify.targets)"), std::string::npos)
        << unknown.body;
    const auto extra = client.post("/v1/notify/test", R"({"target":"ops","url":"http://elsewhere/"})", admin);
    EXPECT_EQ(extra.status, 400) << "a caller cannot point the sender elsewhere";
    const auto twice = client.post("/v1/notify/test", R"({"target":"pager","target":"ops"})", admin);
    EXPECT_EQ(twice.status, 400);
    EXPECT_NE(twice.body.find("target: given more than once"), std::string::npos) << twice.body;
    EXPECT_EQ(client.post("/v1/notify/test", R"({"target":"ops","pad":")" + std::string(17 * 1024, 'x') + "\"}", admin)
                  .status,
              413);
    receiver.answer_with(500);
    const auto refused = client.post("/v1/notify/test", R"({"target":"ops"})", admin);
    EXPECT_EQ(refused.status, 502);
    EXPECT_EQ(json::parse(refused.body)["status"], 500);
    receiver.down();
    const auto down = client.post("/v1/notify/test", R"({"target":"ops"})", admin);
    EXPECT_EQ(down.status, 502);
    EXPECT_NE(down.body.find("connect failed"), std::string::npos) << down.body;
    EXPECT_EQ(down.body.find(secret), std::string::npos);

    EXPECT_EQ(evalsha_calls(), before) << "no script call";
    EXPECT_EQ(redis.command({"DBSIZE"}), "0") << "no key written";
    const auto policies = client.get("/v1/policies", admin);
    EXPECT_EQ(policies.status, 200);
    EXPECT_EQ(policies.body.find(secret), std::string::npos) << "the secret is not in /v1/policies";
    sidecar.stop();
    EXPECT_EQ(sidecar.process().log().find(secret), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::test::notify_webhooks_test
