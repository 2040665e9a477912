// Counters of the rate limit quota service: streams, reports and the actions sent.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace ratelimitd::rls {

/// Lock-free counters, written from gRPC's threads and read at scrape.
/// @par Thread Safety
/// Every member may be called from any thread.
class QuotaMetrics {
public:
    void count_stream_opened() noexcept { add(streams_opened_); open_.fetch_add(1, std::memory_order_relaxed); }
    void count_stream_closed() noexcept { open_.fetch_sub(1, std::memory_order_relaxed); }
    /// A stream ended at once: its connection held max_streams_per_connection.
    void count_stream_refused() noexcept { add(streams_refused_); }
    /// One report read, with how many of its buckets were left out (QuotaReportBounds).
    void count_report(std::uint64_t left_out) noexcept {
        add(reports_);
        buckets_left_out_.fetch_add(left_out, std::memory_order_relaxed);
    }
    void count_assignment() noexcept { add(assignments_); }
    void count_abandon() noexcept { add(abandons_); }
    /// `buckets` asked of the share ledger in one report; `answered` false: none got a share
    /// (the fallback: Envoy keeps its last assignment).
    void count_shares(std::uint64_t buckets, bool answered) noexcept {
        shares_asked_.fetch_add(buckets, std::memory_order_relaxed);
        if (!answered) fallbacks_.fetch_add(buckets, std::memory_order_relaxed);
    }
    /// The last global usage the ledger reported for a bucket's window.
    void count_global_usage(std::uint64_t used) noexcept { global_used_.store(used, std::memory_order_relaxed); }

    /// Prometheus text of every series (appended to /metrics with the gRPC series).
    [[nodiscard]] std::string render() const;

private:
    static void add(std::atomic<std::uint64_t>& c) noexcept { c.fetch_add(1, std::memory_order_relaxed); }

    std::atomic<std::uint64_t> streams_opened_{0};
    std::atomic<std::int64_t> open_{0};
    std::atomic<std::uint64_t> streams_refused_{0};
    std::atomic<std::uint64_t> reports_{0};
    std::atomic<std::uint64_t> buckets_left_out_{0};
    std::atomic<std::uint64_t> assignments_{0};
    std::atomic<std::uint64_t> abandons_{0};
    std::atomic<std::uint64_t> shares_asked_{0};
    std::atomic<std::uint64_t> fallbacks_{0};
    std::atomic<std::uint64_t> global_used_{0};
};

}  // namespace ratelimitd::rls
