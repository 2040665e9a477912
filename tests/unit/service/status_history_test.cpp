// The status page's history (issue 54): samples are differences of the running totals, the
// ring keeps the last 15 minutes and no more, a sample names at most five policies, and the
// store latency's p50/p99 come from the interval's own buckets.
#include "ratelimitd/service/metrics.hpp"
#include "ratelimitd/service/status_history.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace ratelimitd::service {
namespace {

constexpr std::int64_t t0 = 1'796'126'400'000;  // 2026-12-01T12:00:00Z

StatusInputs totals(std::uint64_t allowed, std::uint64_t denied) {
    StatusInputs in;
    in.metrics.checks[static_cast<std::size_t>(Outcome::allowed)] = allowed;
    in.metrics.checks[static_cast<std::size_t>(Outcome::denied)] = denied;
    return in;
}

TEST(StatusHistory, ASampleIsTheDifferenceSinceTheLastTotals) {
    StatusHistory h;
    h.record(t0, totals(100, 10));
    EXPECT_TRUE(h.samples().empty());  // the first totals are only remembered
    StatusInputs in = totals(160, 13);
    in.webhooks_sent = 4;
    in.webhooks_dropped = 1;
    in.held = 7;
    in.metrics.store_errors = 2;
    h.record(t0 + 5'000, in);
    const auto s = h.samples();
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].at_ms, t0 + 5'000);
    EXPECT_EQ(s[0].span_ms, 5'000);
    EXPECT_EQ(s[0].checks[static_cast<std::size_t>(Outcome::allowed)], 60u);
    EXPECT_EQ(s[0].checks[static_cast<std::size_t>(Outcome::denied)], 3u);
    EXPECT_EQ(s[0].webhooks_sent, 4u);
    EXPECT_EQ(s[0].webhooks_dropped, 1u);
    EXPECT_EQ(s[0].store_errors, 2u);
    EXPECT_EQ(s[0].held, 7);
    // A counter that went down (restarted) counts from 0, never as a huge rise.
    h.record(t0 + 10'000, totals(5, 13));
    EXPECT_EQ(h.samples().back().checks[static_cast<std::size_t>(Outcome::allowed)], 5u);
}

TEST(StatusHistory, TheRingKeepsFifteenMinutesAndDropsTheOldest) {
    StatusHistory h;
    for (std::uint64_t i = 0; i <= 200; ++i) h.record(t0 + static_cast<std::int64_t>(i) * 5'000, totals(i * 2, 0));
    const auto s = h.samples();
    ASSERT_EQ(s.size(), StatusHistory::capacity);
    EXPECT_EQ(StatusHistory::capacity * StatusHistory::interval, std::chrono::minutes(15));
    EXPECT_EQ(s.front().at_ms, t0 + 21 * 5'000);  // samples 1..20 gone
    EXPECT_EQ(s.back().at_ms, t0 + 200 * 5'000);
    for (const auto& sample : s) EXPECT_EQ(sample.checks[0], 2u);
}

TEST(StatusHistory, ASampleNamesTheFivePoliciesThatDeniedMostAndSumsTheRest) {
    StatusHistory h;
    StatusInputs before;
    StatusInputs after;
    for (int p = 0; p < 8; ++p) {
        const std::string name = "p" + std::to_string(p);
        before.metrics.denied[name] = 100;
        after.metrics.denied[name] = 100 + static_cast<std::uint64_t>(p + 1);  // p7 denied 8, p0 1
    }
    h.record(t0, before);
    h.record(t0 + 5'000, after);
    const auto s = h.samples().at(0);
    EXPECT_EQ(s.denied[0].policy, "p7");
    EXPECT_EQ(s.denied[0].denied, 8u);
    EXPECT_EQ(s.denied[4].policy, "p3");
    EXPECT_EQ(s.denied[4].denied, 4u);
    EXPECT_EQ(s.denied_other, 3u + 2u + 1u);
}

TEST(StatusHistory, StoreLatencyQuantilesComeFromTheIntervalsBuckets) {
    StatusHistory h;
    StatusInputs before;
    before.metrics.store_latency[0] = 1'000;  // earlier calls must not weigh on the next sample
    h.record(t0, before);
    StatusInputs after = before;
    after.metrics.store_latency[2] += 90;  // 90 calls within 0.5 ms
    after.metrics.store_latency[6] += 10;  // 10 within 10 ms
    h.record(t0 + 5'000, after);
    h.record(t0 + 10'000, after);  // then none
    const auto s = h.samples();
    EXPECT_EQ(s[0].store_calls, 100u);
    EXPECT_DOUBLE_EQ(s[0].store_p50_ms, 0.5);
    EXPECT_DOUBLE_EQ(s[0].store_p99_ms, 10.0);
    EXPECT_EQ(s[1].store_calls, 0u);
    EXPECT_DOUBLE_EQ(s[1].store_p50_ms, -1);
}

TEST(StatusHistory, MetricsTotalsAreWhatTheHotPathCounted) {
    Metrics m;
    m.count_check("login", Outcome::denied, false);
    m.count_check("login", Outcome::denied, false);
    m.count_check("login", Outcome::allowed, false);
    m.count_check("api \"v2\"", Outcome::failed_closed, false);
    m.observe_store_latency(std::chrono::microseconds(300));
    m.observe_store_latency(std::chrono::seconds(3));  // above the last bucket
    m.count_store_error(errc::store_timeout);
    const MetricTotals t = m.totals();
    EXPECT_EQ(t.checks[static_cast<std::size_t>(Outcome::denied)], 2u);
    EXPECT_EQ(t.checks[static_cast<std::size_t>(Outcome::allowed)], 1u);
    EXPECT_EQ(t.denied.at("login"), 2u);
    EXPECT_EQ(t.denied.at("api \"v2\""), 1u);  // failed_closed refuses too; the name unescaped
    EXPECT_EQ(t.store_latency[2], 1u);
    EXPECT_EQ(t.store_latency_over, 1u);
    EXPECT_EQ(t.store_errors, 1u);
}

}  // namespace
}  // namespace ratelimitd::service
