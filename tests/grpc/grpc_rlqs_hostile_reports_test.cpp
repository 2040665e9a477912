// RLQS reports an authorised Envoy may shape (docs/rlqs.md, "Hostile reports"), against a real
// redis-server and a real ratelimitd: counts of UINT64_MAX, 2^63 and 2^53 + 1, a time_elapsed of
// INT64_MAX seconds, zero or negative. Each is answered (never a stream error), is charged as
// the whole limit and no more (the window's usage saturates there), and an honest Envoy of the
// same bucket keeps getting shares from the ledger, its budget back in the next windows. And
// while Redis is down, 50 reports log one warning, not 50.
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/quota_filter.hpp"
#include "support/quota_windows.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_rlqs_hostile_reports_test {
namespace {

constexpr std::int64_t limit = 200;
constexpr std::int64_t window_ms = 2'000;

const std::string config = R"(rlqs:
  web:
    shared:
      match: {kind: api}
      limit: 200
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
)";

const QuotaBucket api{{"kind", "api"}};

/// A report of `api` with the counts and time_elapsed given as the wire holds them.
QuotaReports hostile(std::uint64_t allowed, std::uint64_t denied, std::int64_t seconds, std::int32_t nanos) {
    QuotaReports report = quota_report("web", {{api, allowed, denied}});
    auto* elapsed = report.mutable_bucket_quota_usages(0)->mutable_time_elapsed();
    elapsed->set_seconds(seconds);
    elapsed->set_nanos(nanos);
    return report;
}

class RlqsHostileReports : public ::testing::Test {
protected:
    RlqsHostileReports()
        : replica_(config, redis_.url(), {"--grpc-listen", "127.0.0.1:0"}),
          grpc_port_(grpc_port_from_log(replica_.process().wait_for_log("grpc listening on", process_start_bound))) {}

    double metric(const std::string& series) {
        return sample(HttpClient(replica_.port()).get("/metrics").body, "ratelimitd_rlqs_" + series);
    }

    RedisServer redis_;
    Ratelimitd replica_;
    unsigned short grpc_port_;
};

TEST_F(RlqsHostileReports, HugeCountsAndTimesAreAnsweredChargedAsTheLimitAndSpoilNothing) {
    QuotaFilter honest(QuotaFilterSettings{.domain = "web", .bucket = api, .requests_per_second = 20,
                                           .replicas = {grpc_port_}});
    ASSERT_TRUE(wait_until([&] { return honest.answers() >= 3; }, std::chrono::milliseconds(10'000)));

    constexpr auto u64_max = std::numeric_limits<std::uint64_t>::max();
    constexpr auto i64_max = std::numeric_limits<std::int64_t>::max();
    const std::vector<QuotaReports> reports{
        hostile(u64_max, u64_max, 1, 0),                         // overflows int64 and a double's integers
        hostile(std::uint64_t{1} << 63, (std::uint64_t{1} << 53) + 1, 1, 0),
        hostile(u64_max, 0, i64_max, 999'999'999),               // time_elapsed past any sum
        hostile(u64_max, u64_max, 0, 0),                         // no time at all
        hostile(u64_max, 5, -5, -1),                             // time going back
    };
    QuotaStreamClient stream(grpc_port_);
    for (std::size_t i = 0; i < reports.size(); ++i) {
        ASSERT_TRUE(stream.send(reports[i])) << i;
        const auto answer = stream.read();
        ASSERT_TRUE(answer.has_value()) << i;
        // The window is spent: DENY_ALL, from the ledger (not a fallback).
        ASSERT_EQ(answer->bucket_action_size(), 1) << i;
        EXPECT_EQ(answer->bucket_action(0).quota_assignment_action().rate_limit_strategy().blanket_rule(),
                  envoy::type::v3::RateLimitStrategy::DENY_ALL)
            << i;
        // Charged, but no more than the limit: the usage a small integer, never past it.
        const auto keys = redis_.keys();
        ASSERT_EQ(keys.size(), 1U);
        EXPECT_LE(std::stoll(redis_.command({"HGET", keys.front(), "u"})), limit) << i;
    }
    EXPECT_TRUE(stream.finish().ok());
    const std::int64_t after = now_ms();

    // The honest Envoy keeps being answered from the ledger and has its budget back.
    const auto answered = honest.answers();
    run_windows(2, window_ms);
    EXPECT_GT(honest.answers(), answered + 5);
    const auto windows = windows_of({&honest}, after, now_ms(), window_ms);
    expect_within_bound(windows, "after hostile reports", limit);
    for (const auto& [k, w] : windows) EXPECT_GE(w.admitted, 20) << "window " << k;  // of its 40 asked
    EXPECT_EQ(metric("share_fallbacks_total"), 0);
    honest.leave();
    EXPECT_FALSE(honest.saw_stream_error());
}

/// Lines of `log` holding `text`.
int lines_with(const std::string& log, const std::string& text) {
    std::istringstream in(log);
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line.find(text) != std::string::npos ? 1 : 0;
    return n;
}

TEST_F(RlqsHostileReports, FiftyReportsWhileRedisIsDownLogOneWarning) {
    redis_.kill_hard();
    QuotaStreamClient stream(grpc_port_);
    for (int i = 0; i < 50; ++i) {
        ASSERT_TRUE(stream.send(quota_report("web", {{api, 1, 0}, {{{"kind", "strict"}}, 1, 0}}))) << i;
        const auto answer = stream.read();  // strict's deny fallback: one action each
        ASSERT_TRUE(answer.has_value()) << i;
        EXPECT_EQ(answer->bucket_action_size(), 1) << i;
    }
    EXPECT_EQ(metric("share_fallbacks_total"), 100);  // two budgeted buckets a report
    const int warnings = lines_with(replica_.process().log(), "rlqs shares:");
    std::printf("50 reports with Redis down: %d warning lines\n", warnings);
    EXPECT_GE(warnings, 1);
    EXPECT_LE(warnings, 3);  // the first, then one per 10 s at most

    redis_.restart();
    ASSERT_TRUE(stream.send(quota_report("web", {{api, 1, 0}})));
    ASSERT_TRUE(stream.read().has_value());
    EXPECT_FALSE(replica_.process().wait_for_log("answers again", std::chrono::milliseconds(5'000)).empty());
    EXPECT_TRUE(stream.finish().ok());
}

}  // namespace
}  // namespace ratelimitd::test::grpc_rlqs_hostile_reports_test
