// Counters of the rate limit quota service: streams, reports and the actions sent.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

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
    /// One bucket of rule (`domain`, `rule`) asked of the share ledger: `used`, the window's
    /// global usage it reported, or nothing when it did not answer (the rule's fallback).
    void count_rule_share(std::string_view domain, std::string_view rule, const std::uint64_t* used);

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
    /// Per rule of the registries seen (at most the rules of rlqs:, kept across reloads).
    struct RuleShares {
        std::string domain;
        std::string rule;
        std::uint64_t shares = 0;
        std::uint64_t fallbacks = 0;
        std::uint64_t global_usage = 0;  ///< the last the ledger reported, of any of its buckets
    };
    mutable std::mutex rules_mutex_;
    std::map<std::string, RuleShares, std::less<>> rules_;  ///< by domain, NUL, rule

    void render_rules(std::string& out) const;
};

}  // namespace ratelimitd::rls
