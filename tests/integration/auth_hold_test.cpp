// /v1/auth holds a delayed check's answer for its delay (issue 50), as nginx's limit_req holds
// the request: on a timer, bounded by max_held_requests (beyond it: the door's denial,
// counted), a client that goes away releases nothing, and SIGTERM sends held answers at once.
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/raw_connection.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::test::auth_hold_test {
namespace {

using namespace std::chrono_literals;

// One per second: the second request waits about 1 s. One per 10 s: each later one 10 s more.
const std::string config = R"(
policies:
  second: {algorithm: token_bucket, limit: 1, window: 1s, burst: 1, max_delay: 5s}
  slow: {algorithm: gcra, limit: 1, window: 10s, burst: 1, max_delay: 60s}
routes:
  - { path: "/second/*", policy: second }
  - { path: "/slow/*", policy: slow }
)";

const std::string subrequest_of(const std::string& uri) {
    return "GET /v1/auth HTTP/1.1\r\nHost: x\r\nX-Original-URI: " + uri + "\r\nX-Original-Method: GET\r\n\r\n";
}

double metric(unsigned short port, const std::string& series) {
    HttpClient c(port);
    return sample(c.get("/metrics").body, series);
}

/// A subrequest sent on a connection of its own, its answer not read yet.
std::unique_ptr<RawConnection> send_held(unsigned short port, const std::string& uri) {
    auto c = std::make_unique<RawConnection>(port);
    EXPECT_TRUE(c->send(subrequest_of(uri)));
    return c;
}

bool held_becomes(unsigned short port, double n) {
    return wait_until([&] { return metric(port, "ratelimitd_held_requests") == n; }, process_start_bound);
}

// A shadow policy only counts: past its burst it reserves (its level shows what it would
// have done) but neither door waits, alone or as a layer beside an enforced limit.
TEST(AuthHold, AShadowPolicyWithMaxDelayNeverHoldsARequest) {
    const std::string shadowed = R"(
policies:
  open: {algorithm: fixed_window, limit: 100, window: 1h}
  trial: {algorithm: token_bucket, limit: 1, window: 60s, burst: 1, max_delay: 60s, shadow: true}
routes:
  - { path: "/trial/*", policy: trial }
  - { path: "/layered/*", limits: [ { policy: open }, { policy: trial } ] }
)";
    Ratelimitd server(shadowed, "", {"--watch-config", "off"});
    HttpClient c(server.port());
    for (const char* uri : {"/trial/a", "/trial/a", "/layered/b", "/layered/b"}) {
        const auto r = c.get("/v1/auth", {{"X-Original-URI", uri}, {"X-Original-Method", "GET"}});
        EXPECT_EQ(r.status, 200) << uri;
    }
    for (int i = 0; i < 2; ++i) {
        const auto r = c.post("/v1/check", R"({"policy":"trial","tenant":"t"})");
        EXPECT_EQ(r.status, 200) << r.body;
        EXPECT_EQ(r.body.find("delay_ms"), std::string::npos) << r.body;
        EXPECT_EQ(r.header("x-ratelimit-delay-ms"), "") << r.body;
    }
    EXPECT_EQ(metric(server.port(), "ratelimitd_held_requests"), 0);
    EXPECT_LE(metric(server.port(), "ratelimitd_delayed_checks_total{door=\"auth\"}"), 0);
    EXPECT_LE(metric(server.port(), "ratelimitd_delayed_checks_total{door=\"check\"}"), 0);
}

TEST(AuthHold, ADelayedCheckIsAnsweredWhenItsDelayIsOver) {
    // A request_timeout shorter than the hold: the connection's deadline must wait for it.
    Ratelimitd server(config, "", {"--watch-config", "off", "--request-timeout", "300ms"});
    HttpClient first(server.port());
    EXPECT_EQ(first.get("/v1/auth", {{"X-Original-URI", "/second/a"}, {"X-Original-Method", "GET"}}).status, 200);
    const auto sent = std::chrono::steady_clock::now();
    auto held = send_held(server.port(), "/second/a");
    ASSERT_TRUE(held_becomes(server.port(), 1)) << "the second request is held";
    const HttpResponse r = held->read_response(30s);
    const auto waited = std::chrono::steady_clock::now() - sent;
    EXPECT_EQ(r.status, 200);
    // The hold is a timer of the delay the store gave, which started after the request was
    // sent: the answer cannot come sooner. The store's delay is in the histogram's sum.
    const double delay_s = metric(server.port(), "ratelimitd_check_delay_seconds_sum");
    EXPECT_GT(delay_s, 0.0);
    EXPECT_LE(delay_s, 1.0) << "one token per second: at most 1 s";
    EXPECT_GE(std::chrono::duration<double>(waited).count(), delay_s);
    EXPECT_EQ(metric(server.port(), "ratelimitd_delayed_checks_total{door=\"auth\"}"), 1);
    EXPECT_EQ(metric(server.port(), "ratelimitd_held_requests"), 0) << "its slot is free again";
}

TEST(AuthHold, BeyondMaxHeldRequestsTheDoorDeniesAndCountsItAndSigtermSendsTheHeldAtOnce) {
    Ratelimitd server(config, "", {"--watch-config", "off", "--max-held-requests", "2"});
    HttpClient first(server.port());
    EXPECT_EQ(first.get("/v1/auth", {{"X-Original-URI", "/slow/a"}, {"X-Original-Method", "GET"}}).status, 200);
    std::vector<std::unique_ptr<RawConnection>> held;
    held.push_back(send_held(server.port(), "/slow/a"));  // due in about 10 s
    held.push_back(send_held(server.port(), "/slow/a"));  // about 20 s
    ASSERT_TRUE(held_becomes(server.port(), 2));
    // The third would be held 30 s: two are held already, so the door denies it at once.
    const HttpResponse refused =
        first.get("/v1/auth", {{"X-Original-URI", "/slow/a"}, {"X-Original-Method", "GET"}});
    EXPECT_EQ(refused.status, 429);
    EXPECT_GE(std::stoi(refused.header("retry-after")), 21) << "retry when its delay (> 20 s) is over";
    EXPECT_EQ(metric(server.port(), "ratelimitd_held_refused_total{policy=\"slow\",bound=\"process\"}"), 1);
    EXPECT_EQ(metric(server.port(), "ratelimitd_held_requests"), 2);
    EXPECT_EQ(metric(server.port(), "ratelimitd_delayed_checks_total{door=\"auth\"}"), 2);

    // SIGTERM: the drain sends both held answers now (their reservations are charged), long
    // before their 10 s and 20 s, and the process exits cleanly.
    server.process().signal(SIGTERM);
    for (auto& c : held) EXPECT_EQ(c->read_response(std::chrono::seconds(process_start_bound)).status, 200);
    server.stop();
}

TEST(AuthHold, AClientThatGoesAwayReleasesNothing) {
    Ratelimitd server(config, "", {"--watch-config", "off"});
    HttpClient first(server.port());
    EXPECT_EQ(first.get("/v1/auth", {{"X-Original-URI", "/slow/a"}, {"X-Original-Method", "GET"}}).status, 200);
    auto gone = send_held(server.port(), "/slow/a");  // reserved: due in about 10 s
    ASSERT_TRUE(held_becomes(server.port(), 1));
    gone.reset();  // the proxy's client went away: the connection closes while held
    auto next = send_held(server.port(), "/slow/a");
    ASSERT_TRUE(held_becomes(server.port(), 2)) << "the gone client's answer is still held until due";
    // The reservation stands: the next one is queued after it, about 20 s, not 10 s.
    EXPECT_EQ(metric(server.port(), "ratelimitd_check_delay_seconds_bucket{le=\"10\"}"), 1);
    EXPECT_EQ(metric(server.port(), "ratelimitd_check_delay_seconds_bucket{le=\"30\"}"), 2);
    server.stop();  // the drain ends both holds; the gone client's send fails quietly
}

}  // namespace
}  // namespace ratelimitd::test::auth_hold_test
