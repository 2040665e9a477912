// Metrics kept per thread: every thread's counts summed at scrape, the new families rendered.
#include "ratelimitd/service/metrics.hpp"

#include "support/metrics_text.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::service {
namespace {

using test::sample;

TEST(ThreadMetrics, CountsOfManyThreadsAreSummedExactly) {
    Metrics m;
    constexpr int threads = 8;
    constexpr int per_thread = 20'000;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&m, t] {
            // A policy every thread shares, and one of its own (as after a reload).
            for (int i = 0; i < per_thread; ++i) {
                m.count_check("shared", Outcome::denied, false);
                m.count_units("shared", false, 3);
                m.count_http("/v1/check", 429);
            }
            m.count_check("own-" + std::to_string(t), Outcome::allowed, true);
        });
    }
    // Scrapes while the threads count: never a torn or decreasing total.
    double last = 0;
    for (int i = 0; i < 50; ++i) {
        // Absent (-1) until some thread has counted: absent is 0 to Prometheus.
        const double now =
            std::max(0.0, sample(m.render("1", "embedded"), R"(ratelimitd_checks_total{policy="shared",verdict="denied"})"));
        EXPECT_GE(now, last);
        last = now;
    }
    for (auto& w : workers) w.join();
    const std::string text = m.render("1", "embedded");
    EXPECT_EQ(sample(text, R"(ratelimitd_checks_total{policy="shared",verdict="denied"})"), threads * per_thread);
    EXPECT_EQ(sample(text, R"(ratelimitd_cost_units_total{policy="shared",verdict="denied"})"), 3.0 * threads * per_thread);
    EXPECT_EQ(sample(text, R"(ratelimitd_cost_units_total{policy="shared",verdict="allowed"})"), 0);
    EXPECT_EQ(sample(text, R"(ratelimitd_http_requests_total{route="/v1/check",status="429"})"), threads * per_thread);
    for (int t = 0; t < threads; ++t) {
        const std::string p = "own-" + std::to_string(t);
        EXPECT_EQ(sample(text, "ratelimitd_checks_total{policy=\"" + p + "\",verdict=\"allowed\"}"), 1) << p;
        EXPECT_EQ(sample(text, "ratelimitd_checks_near_limit_total{policy=\"" + p + "\"}"), 1) << p;
    }
}

TEST(ThreadMetrics, StoreLatencyAndRequestsInFlightAreSummedOverThreads) {
    Metrics m;
    constexpr int threads = 4;
    constexpr int per_thread = 5'000;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&m] {
            for (int i = 0; i < per_thread; ++i) {
                m.request_started();
                m.observe_store_latency(i % 2 == 0 ? std::chrono::microseconds(200) : std::chrono::milliseconds(20));
                m.request_finished();
            }
            m.request_started();  // still in flight when the thread ends
        });
    }
    for (auto& w : workers) w.join();
    std::string text = m.render("1", "x");
    const std::string b = R"(ratelimitd_store_latency_seconds_bucket{le=")";
    EXPECT_EQ(sample(text, b + "0.0001\"}"), 0) << text;
    EXPECT_EQ(sample(text, b + "0.00025\"}"), threads * per_thread / 2) << text;
    EXPECT_EQ(sample(text, b + "0.025\"}"), threads * per_thread) << text;
    EXPECT_EQ(sample(text, b + "+Inf\"}"), threads * per_thread) << text;
    EXPECT_EQ(sample(text, "ratelimitd_store_latency_seconds_count"), threads * per_thread) << text;
    EXPECT_NEAR(sample(text, "ratelimitd_store_latency_seconds_sum"), threads * per_thread / 2 * (0.0002 + 0.02), 1e-6);
    EXPECT_EQ(sample(text, "ratelimitd_requests_in_flight"), threads) << text;
    // Requests that started on the workers finish here: the sum over threads stays right.
    for (int t = 0; t < threads; ++t) m.request_finished();
    text = m.render("1", "x");
    EXPECT_EQ(sample(text, "ratelimitd_requests_in_flight"), 0) << text;
}

TEST(ThreadMetrics, TwoInstancesOnOneThreadKeepTheirOwnCounts) {
    Metrics a;
    Metrics b;
    a.count_check("p", Outcome::allowed, false);
    b.count_check("p", Outcome::denied, false);
    a.count_check("p", Outcome::allowed, false);
    EXPECT_EQ(sample(a.render("1", "x"), R"(ratelimitd_checks_total{policy="p",verdict="allowed"})"), 2);
    EXPECT_EQ(sample(a.render("1", "x"), R"(ratelimitd_checks_total{policy="p",verdict="denied"})"), 0);
    EXPECT_EQ(sample(b.render("1", "x"), R"(ratelimitd_checks_total{policy="p",verdict="denied"})"), 1);
}

TEST(ThreadMetrics, AnswerTimeHistogramIsCumulativeFrom50Microseconds) {
    Metrics m;
    using std::chrono::microseconds;
    m.observe_answer_time("/v1/check", microseconds(30));
    m.observe_answer_time("/v1/check", microseconds(70));
    m.observe_answer_time("/v1/check", microseconds(70'000));
    m.observe_answer_time("/v1/check", std::chrono::seconds(10));
    const std::string text = m.render("1", "x");
    const std::string b = R"(ratelimitd_http_request_duration_seconds_bucket{route="/v1/check",le=")";
    EXPECT_EQ(sample(text, b + "5e-05\"}"), 1) << text;
    EXPECT_EQ(sample(text, b + "0.0001\"}"), 2) << text;
    EXPECT_EQ(sample(text, b + "0.05\"}"), 2) << text;
    EXPECT_EQ(sample(text, b + "0.1\"}"), 3) << text;
    EXPECT_EQ(sample(text, b + "2.5\"}"), 3) << text;
    EXPECT_EQ(sample(text, b + "+Inf\"}"), 4) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_http_request_duration_seconds_count{route="/v1/check"})"), 4);
    EXPECT_NEAR(sample(text, R"(ratelimitd_http_request_duration_seconds_sum{route="/v1/check"})"), 10.0701, 1e-6);
}

// count_answer is request_finished, count_http and observe_answer_time in one call; two
// Metrics used in turn on one thread (the thread's last shard switching) keep their own.
TEST(ThreadMetrics, OneAnswerCountsItsRouteStatusTimeAndEndsItsRequest) {
    Metrics m;
    Metrics other;
    using std::chrono::microseconds;
    m.request_started();
    other.request_started();
    m.request_started();
    m.count_answer("/v1/check", 200, microseconds(30));
    other.count_answer("/v1/auth", 429, microseconds(70));
    const std::string text = m.render("1", "x");
    EXPECT_EQ(sample(text, R"(ratelimitd_http_requests_total{route="/v1/check",status="200"})"), 1) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_http_request_duration_seconds_count{route="/v1/check"})"), 1) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_http_requests_total{route="/v1/auth",status="429"})"), -1) << text;
    EXPECT_EQ(sample(text, "ratelimitd_requests_in_flight"), 1) << text;
    const std::string theirs = other.render("1", "x");
    EXPECT_EQ(sample(theirs, R"(ratelimitd_http_requests_total{route="/v1/auth",status="429"})"), 1) << theirs;
    EXPECT_EQ(sample(theirs, "ratelimitd_requests_in_flight"), 0) << theirs;
}

TEST(ThreadMetrics, OneVerdictCountsCheckUnitsAndCacheHit) {
    Metrics m;
    m.count_verdict("login", Outcome::denied, false, 4, true);
    m.count_verdict("login", Outcome::shadow_denied, false, 2, false);
    m.count_verdict("login", Outcome::allowed, true, 3, false);
    const std::string text = m.render("1", "redis");
    EXPECT_EQ(sample(text, R"(ratelimitd_checks_total{policy="login",verdict="denied"})"), 1) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_checks_total{policy="login",verdict="shadow_denied"})"), 1) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_checks_near_limit_total{policy="login"})"), 1) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_cost_units_total{policy="login",verdict="denied"})"), 6) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_cost_units_total{policy="login",verdict="allowed"})"), 3) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_denial_cache_hits_total{policy="login"})"), 1) << text;
}

TEST(ThreadMetrics, DenialCacheHitsArePerPolicy) {
    Metrics m;
    m.count_denial_cache_hit("login");
    m.count_denial_cache_hit("login");
    m.count_check("api", Outcome::allowed, false);
    const std::string text = m.render("1", "redis");
    EXPECT_EQ(sample(text, R"(ratelimitd_denial_cache_hits_total{policy="login"})"), 2) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_denial_cache_hits_total{policy="api"})"), 0) << text;
}

TEST(ThreadMetrics, LastReloadGaugesFollowEachResult) {
    Metrics m;
    std::string text = m.render("1", "x");
    EXPECT_EQ(sample(text, "ratelimitd_config_last_reload_success"), 1);  // the start-up load
    const double started = sample(text, "ratelimitd_config_last_reload_timestamp_seconds");
    EXPECT_GT(started, 1.7e9);
    m.count_reload(false);
    text = m.render("1", "x");
    EXPECT_EQ(sample(text, "ratelimitd_config_last_reload_success"), 0);
    EXPECT_GE(sample(text, "ratelimitd_config_last_reload_timestamp_seconds"), started);
    m.count_reload(true);
    EXPECT_EQ(sample(m.render("1", "x"), "ratelimitd_config_last_reload_success"), 1);
}

TEST(ThreadMetrics, ProcessSeriesComeFromProcSelf) {
    Metrics m;
    const std::string text = m.render("1", "x");
    EXPECT_GT(sample(text, "process_start_time_seconds"), 1.7e9) << text;
    EXPECT_GE(sample(text, "process_cpu_seconds_total"), 0) << text;
    EXPECT_GT(sample(text, "process_resident_memory_bytes"), 1e6) << text;
    // every resident page is mapped: the address space holds at least the resident set
    EXPECT_GE(sample(text, "process_virtual_memory_bytes"), sample(text, "process_resident_memory_bytes")) << text;
    EXPECT_GE(sample(text, "process_open_fds"), 3) << text;  // stdin, stdout, stderr at least
    EXPECT_GE(sample(text, "process_max_fds"), sample(text, "process_open_fds")) << text;
}

}  // namespace
}  // namespace ratelimitd::service
