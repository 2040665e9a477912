// RLQS shares of one global budget across a fleet (docs/rlqs.md, "Shares across the fleet"):
// filter-shaped clients of unequal demand on three ratelimitd replicas sharing one real
// redis-server, over several 2 s windows. In every whole window the fleet admits at most the
// stated bound (limit + 2 per Envoy stream that first reported in it), light clients are not
// starved, a client that leaves is reclaimed from the ledger, a replica killed mid-window moves
// its clients to another within the bound, and with Redis stopped the streams stay up (the
// fallback: Envoy keeps its last assignment, or the rule's deny or local share) and come back
// to shares when it returns, and a reload changes the fleet's limit.
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/quota_filter.hpp"
#include "support/quota_windows.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_rlqs_fleet_test {
namespace {

constexpr std::int64_t limit = 200;
constexpr std::int64_t window_ms = 2'000;

std::string fleet_config(std::int64_t api_limit) {
    return R"(rlqs:
  web:
    shared:
      match: {kind: api}
      limit: )" + std::to_string(api_limit) + R"(
      window: 2s
      reporting_interval: 200ms
      assignment_ttl: 600ms
      idle_after: 60s
    strict:
      match: {kind: strict}
      limit: 200
      window: 2s
      reporting_interval: 200ms
      fallback: deny
    local:
      match: {kind: local}
      limit: 200
      window: 2s
      reporting_interval: 200ms
      fallback: local_share
      expected_envoys: 4
)";
}

const QuotaBucket bucket{{"kind", "api"}};

class RlqsFleet : public ::testing::Test {
protected:
    void start_replicas(std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            replicas_.push_back(std::make_unique<Ratelimitd>(fleet_config(limit), redis_.url(),
                                                             std::vector<std::string>{"--grpc-listen", "127.0.0.1:0"}));
            ports_.push_back(
                grpc_port_from_log(replicas_.back()->process().wait_for_log("grpc listening on", process_start_bound)));
        }
    }

    std::unique_ptr<QuotaFilter> client(double rps, std::size_t replica) {
        return std::make_unique<QuotaFilter>(QuotaFilterSettings{.domain = "web",
                                                                 .bucket = bucket,
                                                                 .requests_per_second = rps,
                                                                 .reporting_interval = std::chrono::milliseconds(200),
                                                                 .replicas = ports_,
                                                                 .first_replica = replica});
    }

    /// Live Envoys in the bucket's ledger hash (its fields less "w" and "u").
    long long ledger_envoys() {
        const auto keys = redis_.keys();
        if (keys.empty()) return 0;
        return redis_.integer({"HLEN", keys.front()}) - 2;
    }

    RedisServer redis_;
    std::vector<std::unique_ptr<Ratelimitd>> replicas_;
    std::vector<unsigned short> ports_;
};

TEST_F(RlqsFleet, FiveClientsOnThreeReplicasStayWithinTheBoundInEveryWindow) {
    start_replicas(3);
    // 285 requests/s of demand against a budget of 100/s.
    const std::vector<double> demand{150, 80, 40, 10, 5};
    std::vector<std::unique_ptr<QuotaFilter>> clients;
    for (std::size_t i = 0; i < demand.size(); ++i) clients.push_back(client(demand[i], i % 3));
    std::vector<const QuotaFilter*> all;
    for (const auto& c : clients) all.push_back(c.get());

    const std::int64_t started = now_ms();
    run_windows(4, window_ms);
    const std::int64_t steady_end = now_ms();
    const auto steady = windows_of(all, started, steady_end, window_ms);
    ASSERT_GE(steady.size(), 4U);
    expect_within_bound(steady, "steady", limit);
    for (const auto& [k, w] : steady) {
        // Light clients are not starved, and the budget is used, not merely withheld.
        EXPECT_GE(w.per_client[3], 1) << "window " << k;
        EXPECT_GE(w.per_client[4], 1) << "window " << k;
        EXPECT_GE(w.admitted, limit / 2) << "window " << k;
    }
    EXPECT_EQ(ledger_envoys(), 5);
    // Per rule: the shares asked and the global usage the ledger last reported.
    const auto metrics = HttpClient(replicas_[0]->port()).get("/metrics").body;
    EXPECT_GT(sample(metrics, "ratelimitd_rlqs_rule_shares_total{domain=\"web\",rule=\"shared\"}"), 0);
    EXPECT_GE(sample(metrics, "ratelimitd_rlqs_rule_global_usage{domain=\"web\",rule=\"shared\"}"), 0);

    // The heaviest leaves: its share is reclaimed once its TTL passes (a report of another).
    clients[0]->leave();
    EXPECT_TRUE(wait_until([&] { return ledger_envoys() == 4; }, std::chrono::milliseconds(10'000)));

    // A replica killed mid-window: its clients (1 and 4) reconnect to the next replica.
    std::this_thread::sleep_for(std::chrono::milliseconds(window_ms / 2 - now_ms() % (window_ms / 2)));
    const std::int64_t killed_at = now_ms();
    replicas_[1]->process().signal(SIGKILL);
    EXPECT_TRUE(wait_until([&] { return clients[1]->streams() == 2 && clients[4]->streams() == 2; },
                           std::chrono::milliseconds(10'000)));
    run_windows(3, window_ms);
    const auto after = windows_of(all, killed_at - window_ms, now_ms(), window_ms);
    expect_within_bound(after, "after kill", limit);
    for (const auto& [k, w] : after) EXPECT_GE(w.per_client[4], 1) << "window " << k;

    for (std::size_t i = 1; i < clients.size(); ++i) {
        clients[i]->leave();
        // A stream on a live replica ends with OK; the killed replica's ended before.
        EXPECT_FALSE(clients[i]->saw_stream_error()) << "client " << i;
    }
    replicas_[1]->process().wait(std::chrono::milliseconds(5'000));
}

TEST_F(RlqsFleet, WithRedisStoppedStreamsStayUpAndEnvoyKeepsItsLastAssignment) {
    start_replicas(1);
    auto light = client(20, 0);
    EXPECT_TRUE(wait_until([&] { return light->answers() >= 3; }, std::chrono::milliseconds(10'000)));
    const auto metric = [&](const std::string& series) {
        return sample(HttpClient(replicas_[0]->port()).get("/metrics").body, "ratelimitd_rlqs_" + series);
    };
    redis_.kill_hard();
    // Reports go on; none is answered with an error, none gets a share: the fallback.
    EXPECT_TRUE(wait_until([&] { return metric("share_fallbacks_total") >= 3; }, std::chrono::milliseconds(15'000)));
    const auto answered = light->answers();
    redis_.restart();
    EXPECT_TRUE(wait_until([&] { return light->answers() > answered + 2; }, std::chrono::milliseconds(15'000)));
    EXPECT_EQ(light->streams(), 1U);  // never ended
    light->leave();
    EXPECT_FALSE(light->saw_stream_error());
}

TEST_F(RlqsFleet, WithRedisDownEachRuleAppliesItsFallback) {
    start_replicas(1);
    redis_.kill_hard();
    QuotaStreamClient stream(ports_[0]);
    ASSERT_TRUE(stream.send(quota_report(
        "web", {{{{"kind", "api"}}, 1, 0}, {{{"kind", "strict"}}, 1, 0}, {{{"kind", "local"}}, 1, 0}})));
    const auto response = stream.read();
    ASSERT_TRUE(response.has_value());
    // keep_last (api): no action; deny (strict): DENY_ALL; local_share: 200 / 4 per window.
    ASSERT_EQ(response->bucket_action_size(), 2);
    EXPECT_EQ(bucket_of(response->bucket_action(0)), (QuotaBucket{{"kind", "strict"}}));
    EXPECT_EQ(response->bucket_action(0).quota_assignment_action().rate_limit_strategy().blanket_rule(),
              envoy::type::v3::RateLimitStrategy::DENY_ALL);
    EXPECT_EQ(bucket_of(response->bucket_action(1)), (QuotaBucket{{"kind", "local"}}));
    const auto& local = response->bucket_action(1).quota_assignment_action().rate_limit_strategy().token_bucket();
    EXPECT_EQ(local.max_tokens(), 50U);
    EXPECT_EQ(local.fill_interval().seconds(), 2);
    EXPECT_TRUE(stream.finish().ok());
    // Counted per rule: each bucket's fallback.
    const auto metrics = HttpClient(replicas_[0]->port()).get("/metrics").body;
    for (const char* rule : {"shared", "strict", "local"}) {
        const std::string series =
            std::string("ratelimitd_rlqs_rule_fallbacks_total{domain=\"web\",rule=\"") + rule + "\"}";
        EXPECT_EQ(sample(metrics, series), 1) << rule;
    }
}

TEST_F(RlqsFleet, AReloadChangesTheFleetsLimit) {
    start_replicas(2);
    std::vector<std::unique_ptr<QuotaFilter>> clients;
    const std::vector<double> demand{100, 40, 10};
    for (std::size_t i = 0; i < demand.size(); ++i) clients.push_back(client(demand[i], i % 2));
    std::vector<const QuotaFilter*> all;
    for (const auto& c : clients) all.push_back(c.get());
    const std::int64_t started = now_ms();
    run_windows(2, window_ms);
    expect_within_bound(windows_of(all, started, now_ms(), window_ms), "before reload", limit);

    constexpr std::int64_t lower = 80;
    for (auto& replica : replicas_) {
        replica->write_config(fleet_config(lower));
        replica->process().signal(SIGHUP);
    }
    for (auto& replica : replicas_) {
        ASSERT_FALSE(replica->process().wait_for_log("reloaded", process_start_bound).empty());
    }
    const std::int64_t reloaded = now_ms();
    run_windows(2, window_ms);
    const auto after = windows_of(all, reloaded, now_ms(), window_ms);
    expect_within_bound(after, "after reload", lower);
    for (const auto& [k, w] : after) EXPECT_GE(w.admitted, lower / 2) << "window " << k;
    for (auto& c : clients) c->leave();
}

}  // namespace
}  // namespace ratelimitd::test::grpc_rlqs_fleet_test
