// Quota webhooks on concurrency leases: a threshold is N of the policy's `limit` leases held,
// decided by the acquire's own script (or the embedded store's step) as a check's is, and
// claimed once per aligned window of the `lease:` length across the fleet. Fifteen acquires at
// once from three sidecars on one real redis-server (and one embedded sidecar) for 10 slots:
// exactly 10 leases, and one event each at the 5th, the 8th and the first refused acquire;
// releasing 3 and acquiring them again in the same window sends nothing more.
#include "support/event_schema.hpp"
#include "support/held_window.hpp"
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"
#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <thread>

namespace ratelimitd::test::notify_leases_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr auto lease_length = 600s;

std::string config(const WebhookReceiver& receiver) {
    return "policies:\n  conns: {algorithm: concurrency, limit: 10, lease: 600s}\n"
           "notify:\n  targets:\n    ops: {url: \"" +
           receiver.url() +
           "\", secret: \"tests-webhook-secret-0123456789\", timeout: 2s}\n"
           "  policies:\n    conns: {at: [0.5, 0.8, 1.0], target: ops}\n";
}

json acquire_body(const std::string& tenant) { return json{{"policy", "conns"}, {"tenant", tenant}}; }

/// `count` acquires at once for `tenant`, spread over the fleet: the leases granted.
std::vector<std::string> acquire_at_once(const std::vector<const Ratelimitd*>& fleet, const std::string& tenant,
                                         std::size_t count) {
    std::mutex mu;
    std::vector<std::string> leases;
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < count; ++i) {
        threads.emplace_back([&, i] {
            HttpClient client(fleet[i % fleet.size()]->port());
            const HttpResponse res = client.post("/v1/check", acquire_body(tenant).dump());
            EXPECT_TRUE(res.status == 200 || res.status == 429) << res.status << " " << res.body;
            if (res.status != 200) return;
            const std::lock_guard lock(mu);
            leases.push_back(json::parse(res.body).at("lease").get<std::string>());
        });
    }
    for (auto& t : threads) t.join();
    return leases;
}

void release(const Ratelimitd& sidecar, const std::string& tenant, const std::string& lease) {
    HttpClient client(sidecar.port());
    json body = acquire_body(tenant);
    body["lease"] = lease;
    const HttpResponse res = client.post("/v1/release", body.dump());
    ASSERT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(json::parse(res.body)["released"], true);
}

/// The events `receiver` got for `tenant`, by threshold.
std::map<double, json> events_of(const WebhookReceiver& receiver, const std::string& tenant) {
    std::map<double, json> out;
    for (const auto& r : receiver.requests()) {
        const json e = json::parse(r.body);
        if (e["tenant"] != tenant) continue;
        EXPECT_TRUE(out.emplace(e["threshold"].get<double>(), e).second) << "twice: " << e.dump();
    }
    return out;
}

void expect_lease_events(const std::map<double, json>& events) {
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events.at(0.5)["used"], 5) << "the 5th lease held";
    EXPECT_EQ(events.at(0.8)["used"], 8) << "the 8th lease held";
    EXPECT_EQ(events.at(1.0)["used"], 10) << "the first acquire refused, all 10 held";
    for (const auto& [threshold, e] : events) {
        EXPECT_EQ(e["type"], "threshold");
        EXPECT_EQ(e["limit"], 10);
        EXPECT_EQ(e["window"], (json{{"name", "conns"}, {"seconds", 600}}));
        EXPECT_EQ(e["window_end"].get<std::int64_t>() % 600, 0) << "the aligned window of the lease's length";
        EXPECT_EQ(e["window_end"].get<std::int64_t>() - e["window_start"].get<std::int64_t>(), 600);
        EXPECT_EQ(e["window_end"], events.at(0.5)["window_end"]) << "one window";
    }
}

/// The scenario on `sidecars` sidecars of one store (`store_url` empty: embedded, one sidecar).
void leases_cross_once(const std::string& store_url, std::size_t sidecars) {
    in_one_window(lease_length, [&](int attempt) {
        WebhookReceiver receiver;
        std::vector<std::unique_ptr<Ratelimitd>> processes;
        std::vector<const Ratelimitd*> fleet;
        for (std::size_t i = 0; i < sidecars; ++i) {
            fleet.push_back(processes.emplace_back(std::make_unique<Ratelimitd>(config(receiver), store_url)).get());
        }
        const std::string tenant = "acme" + std::to_string(attempt);
        std::vector<std::string> held = acquire_at_once(fleet, tenant, 15);
        EXPECT_EQ(held.size(), 10u) << "exactly the limit";
        // Back to 7 held, then to 10 and one refused again: 8 and the refusal crossed anew,
        // in the window that claimed them already.
        for (std::size_t k = 0; k < 3; ++k) release(*fleet[k % fleet.size()], tenant, held[k]);
        EXPECT_EQ(acquire_at_once(fleet, tenant, 4).size(), 3u);
        // A fresh tenant's crossing on each sidecar, queued after those acquires, tells when an
        // event of theirs would be in.
        for (std::size_t i = 0; i < fleet.size(); ++i) {
            EXPECT_EQ(acquire_at_once({fleet[i]}, "late" + std::to_string(i), 5).size(), 5u);
        }
        ASSERT_TRUE(wait_until([&] { return receiver.count() >= 3 + fleet.size(); }, 30s)) << receiver.count();
        EXPECT_EQ(receiver.count(), 3 + fleet.size());
        expect_lease_events(events_of(receiver, tenant));
        EXPECT_EQ(schema_failures(receiver.requests()), "");
    });
}

TEST(NotifyLeases, ConcurrentAcquiresFromThreeSidecarsOnOneRedisCrossEachThresholdOnce) {
    RedisServer redis;
    leases_cross_once(redis.url(), 3);
}

TEST(NotifyLeases, TheEmbeddedStoreCrossesTheSameThresholdsOnce) { leases_cross_once("", 1); }

}  // namespace
}  // namespace ratelimitd::test::notify_leases_test
