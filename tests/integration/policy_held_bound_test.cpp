// A policy's own bound on held /v1/auth answers (issue 50, `max_held`), beside the process's
// max_held_requests: beyond it the door denies at once and counts the denial under the policy
// (ratelimitd_held_refused_total{policy,bound="policy"}); another delaying policy of the same
// process is not bounded by it. On both stores, concurrent subrequests counted exactly.
#include "support/concurrent_calls.hpp"
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/raw_connection.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ratelimitd::test::policy_held_bound_test {
namespace {

// One per 10 s and up to 10 minutes of delay: every held answer is due long after the test has
// counted, so none is released (and its place freed) while the burst arrives.
const std::string config = R"(
policies:
  capped: {algorithm: token_bucket, limit: 1, window: 10s, burst: 1, max_delay: 10m, max_held: 3}
  uncapped: {algorithm: gcra, limit: 1, window: 10s, burst: 1, max_delay: 10m}
routes:
  - { path: "/capped/*", policy: capped }
  - { path: "/uncapped/*", policy: uncapped }
)";

double metric(unsigned short port, const std::string& series) {
    HttpClient c(port);
    return sample(c.get("/metrics").body, series);
}

std::string subrequest_of(const std::string& uri) {
    return "GET /v1/auth HTTP/1.1\r\nHost: x\r\nX-Original-URI: " + uri + "\r\nX-Original-Method: GET\r\n\r\n";
}

/// `n` subrequests for `uri` sent at once, each on a connection of its own, answers unread.
std::vector<std::unique_ptr<RawConnection>> send_at_once(unsigned short port, const std::string& uri, int n) {
    std::vector<std::unique_ptr<RawConnection>> connections;
    for (int i = 0; i < n; ++i) connections.push_back(std::make_unique<RawConnection>(port));
    run_concurrently(n, [&](int i) { EXPECT_TRUE(connections[static_cast<std::size_t>(i)]->send(subrequest_of(uri))); });
    return connections;
}

void beyond_max_held_the_policy_denies_and_counts(const std::string& redis_url) {
    Ratelimitd server(config, redis_url, {"--watch-config", "off", "--max-held-requests", "100"});
    HttpClient first(server.port());
    for (const char* uri : {"/capped/a", "/uncapped/b"}) {
        EXPECT_EQ(first.get("/v1/auth", {{"X-Original-URI", uri}, {"X-Original-Method", "GET"}}).status, 200) << uri;
    }
    // 10 at once past capped's burst, each reserved 10 s after the one before: 3 held, 7 denied
    // at once. 5 past uncapped's: all held, capped's bound is not theirs.
    auto capped = send_at_once(server.port(), "/capped/a", 10);
    auto uncapped = send_at_once(server.port(), "/uncapped/b", 5);
    const std::string refused_by_policy = "ratelimitd_held_refused_total{policy=\"capped\",bound=\"policy\"}";
    ASSERT_TRUE(wait_until([&] { return metric(server.port(), refused_by_policy) == 7; }, process_start_bound))
        << metric(server.port(), refused_by_policy);
    ASSERT_TRUE(wait_until([&] { return metric(server.port(), "ratelimitd_held_requests") == 8; }, process_start_bound));
    EXPECT_EQ(metric(server.port(), "ratelimitd_held_refused_total{policy=\"capped\",bound=\"process\"}"), 0);
    EXPECT_EQ(metric(server.port(), "ratelimitd_held_refused_total{policy=\"uncapped\",bound=\"policy\"}"), -1)
        << "never refused: no series";
    EXPECT_EQ(metric(server.port(), "ratelimitd_delayed_checks_total{door=\"auth\"}"), 8);

    // SIGTERM: the drain answers the 8 held ones now; the 7 denied were answered already.
    server.process().signal(SIGTERM);
    std::mutex mu;
    int held = 0;
    int denied = 0;
    run_concurrently(10, [&](int i) {
        const int status = capped[static_cast<std::size_t>(i)]->read_response(process_start_bound).status;
        std::lock_guard lock(mu);
        held += status == 200 ? 1 : 0;
        denied += status == 429 ? 1 : 0;
    });
    EXPECT_EQ(held, 3);
    EXPECT_EQ(denied, 7);
    for (auto& c : uncapped) EXPECT_EQ(c->read_response(process_start_bound).status, 200);
    server.stop();
}

TEST(PolicyHeldBound, BeyondMaxHeldThePolicyDeniesAndCountsOnTheEmbeddedStore) {
    beyond_max_held_the_policy_denies_and_counts("");
}

TEST(PolicyHeldBound, BeyondMaxHeldThePolicyDeniesAndCountsOnRedis) {
    RedisServer redis;
    beyond_max_held_the_policy_denies_and_counts(redis.url());
}

}  // namespace
}  // namespace ratelimitd::test::policy_held_bound_test
