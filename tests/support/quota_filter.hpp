// An Envoy rate_limit_quota filter in miniature, for fleet tests: one bucket, requests at a
// steady demand, each admitted or denied locally by the assignment in force, usage reported
// every reporting interval over a StreamRateLimitQuotas stream that moves to the next replica
// when its server goes away.
#pragma once

#include "support/quota_client.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ratelimitd::test {

/// What the filter is configured with.
struct QuotaFilterSettings {
    std::string domain = "web";
    QuotaBucket bucket;
    double requests_per_second = 10;             ///< demand, at an even pace
    std::chrono::milliseconds reporting_interval{200};
    std::vector<unsigned short> replicas;        ///< tried in turn, from `first_replica`
    std::size_t first_replica = 0;
};

/// Runs on threads of its own from construction to leave(). Behaves as the filter does with
/// no_assignment_behavior DENY_ALL and no expired_assignment_behavior: before the first
/// assignment and once the last one's TTL has passed, requests are denied; a token bucket is
/// enforced as Envoy's (continuous refill, at most max_tokens), restarting full with each
/// assignment; a new bucket is reported at once, then every reporting interval.
class QuotaFilter {
public:
    explicit QuotaFilter(QuotaFilterSettings settings);
    ~QuotaFilter();
    QuotaFilter(const QuotaFilter&) = delete;
    QuotaFilter& operator=(const QuotaFilter&) = delete;

    /// Stops sending requests and reports, and closes the stream (the server sees it end).
    void leave();

    /// When each admitted request was admitted (system clock, ms since the epoch).
    std::vector<std::int64_t> admitted() const;
    /// When each stream sent its first report (system clock, ms): a new Envoy for the ledger.
    std::vector<std::int64_t> stream_starts() const;
    /// Streams opened so far (1 + reconnects).
    std::size_t streams() const;
    /// Answers received.
    std::size_t answers() const;
    /// Whether a stream ended with a status other than OK.
    bool saw_stream_error() const { return stream_error_; }

private:
    struct Assignment;
    struct Session;

    void run();
    /// One request: admitted or denied by the assignment in force.
    void request(std::chrono::steady_clock::time_point now);
    /// Sends the usage since the last report; reconnects first when the stream is gone.
    void report(std::chrono::steady_clock::time_point now);
    void open_session();
    void on_answer(const QuotaResponse& response);

    QuotaFilterSettings settings_;
    std::size_t replica_;
    std::unique_ptr<Session> session_;  ///< the run thread's
    std::chrono::steady_clock::time_point last_report_{};

    mutable std::mutex mutex_;
    std::unique_ptr<Assignment> assignment_;
    std::uint64_t allowed_ = 0;
    std::uint64_t denied_ = 0;
    std::vector<std::int64_t> admitted_;
    std::vector<std::int64_t> stream_starts_;
    std::size_t streams_ = 0;
    std::size_t answers_ = 0;

    std::atomic<bool> stream_error_{false};
    std::atomic<bool> leaving_{false};
    std::thread runner_;
};

}  // namespace ratelimitd::test
