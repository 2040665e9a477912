// Counters and histograms of what the service decides, rendered in Prometheus text format.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/core/metric_family.hpp"
#include "ratelimitd/service/delay_metrics.hpp"
#include "ratelimitd/service/metric_totals.hpp"
#include "ratelimitd/service/thread_counters.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::service {

/// How a check ended, as counted by ratelimitd_checks_total{verdict=...}.
enum class Outcome { allowed, denied, shadow_denied, degraded_allowed, failed_closed };

const char* to_string(Outcome o) noexcept;

/// Process-wide metrics. Labels are bounded: policy names come from the registry, routes from
/// the endpoint table, statuses from HTTP; no tenant, key or secret is ever a label value.
///
/// The hot path takes no lock: the per-policy and per-route series are kept per thread
/// (ThreadCounters, found through a thread_local) and summed at scrape; the rest are atomics.
/// The mutex guards only the scrape-time readers set at start-up.
/// @par Thread Safety
/// Every member may be called from any thread.
class Metrics {
public:
    Metrics();
    ~Metrics();
    Metrics(const Metrics&) = delete;
    Metrics& operator=(const Metrics&) = delete;

    /// Upper bounds (seconds) of the store latency histogram's buckets.
    static constexpr std::array<double, 12> latency_buckets = store_latency_buckets;

    void count_check(std::string_view policy, Outcome outcome, bool near_limit);
    /// Units (the check's cost) a policy admitted (`allowed`) or refused.
    void count_units(std::string_view policy, bool allowed, std::uint64_t units);
    /// What the store (or the denial cache) decided for one policy, in one lookup of its
    /// series: count_check, count_units (allowed unless the outcome denied) and, when
    /// `cache_hit`, count_denial_cache_hit.
    void count_verdict(std::string_view policy, Outcome outcome, bool near_limit, std::uint64_t units, bool cache_hit);
    /// A check of `policy` answered by the denial cache, without a store round trip.
    void count_denial_cache_hit(std::string_view policy);
    /// A refund (a report with a negative cost) that gave up to `units` back to a key of
    /// `policy` (ratelimitd_refunds_total, ratelimitd_refunded_units_total).
    void count_refund(std::string_view policy, std::uint64_t units);
    /// ratelimitd's own answer time of one request on `route` (an endpoint-table label).
    void observe_answer_time(std::string_view route, std::chrono::nanoseconds d);
    void count_store_error(errc code);
    void observe_store_latency(std::chrono::nanoseconds d);
    /// `route` is an endpoint path from the router's table, or "other".
    void count_http(std::string_view route, unsigned status);
    /// A request answered: request_finished, count_http and observe_answer_time at once, with
    /// this thread's counters found once.
    void count_answer(std::string_view route, unsigned status, std::chrono::nanoseconds d);
    /// A connection accepted and served: ratelimitd_connections_open rises and
    /// ratelimitd_connections_accepted_total counts it (a proxy that reuses its connections
    /// keeps that total far below its request count).
    void connection_opened() noexcept {
        connections_open_.fetch_add(1, std::memory_order_relaxed);
        connections_accepted_.fetch_add(1, std::memory_order_relaxed);
    }
    void connection_closed() noexcept { connections_open_.fetch_sub(1, std::memory_order_relaxed); }
    /// Counted in the calling thread's own counters (no locked instruction): the gauge is
    /// summed at the scrape.
    void request_started() { mine().requests_started.add(1); }
    void request_finished() { mine().requests_finished.add(1); }
    /// A reload's result: counted, and the last_reload gauges set (the start-up load counts
    /// as a successful one, at construction).
    void count_reload(bool ok) noexcept;
    /// Reloads applied (`ok`) or refused so far; the start-up load is not one of them.
    [[nodiscard]] std::uint64_t reloads(bool ok) const noexcept {
        return (ok ? reloads_ok_ : reloads_failed_).load(std::memory_order_relaxed);
    }
    void count_access_log_dropped() noexcept { access_log_dropped_.fetch_add(1, std::memory_order_relaxed); }
    /// A connection refused because max_connections were open.
    void count_connection_rejected() noexcept { connections_rejected_.fetch_add(1, std::memory_order_relaxed); }
    /// A /v1/auth request that no route matched, with no default_policy: let through unlimited.
    void count_auth_unmatched() noexcept { auth_unmatched_.fetch_add(1, std::memory_order_relaxed); }

    /// Where the store's series come from (its backend's metric families), read at each
    /// scrape and rendered after the store's errors and latency, as given. Unset: none.
    void set_store_series(std::function<std::vector<MetricFamily>()> series);

    /// max_delay policies: delayed checks, their delays, held /v1/auth answers.
    DelayMetrics delays;

    /// The running totals the status page's history takes a difference of every few seconds:
    /// the same sums a scrape makes, read without a lock on the hot path.
    [[nodiscard]] MetricTotals totals() const;

    /// The whole exposition, `# HELP`/`# TYPE` lines included.
    std::string render(std::string_view version, std::string_view store) const;

private:
    /// This thread's counters, made and linked on its first use (lock-free).
    ThreadCounters& mine();
    void count_http(ThreadCounters& t, std::string_view route, unsigned status);
    void observe_answer_time(ThreadCounters& t, std::string_view route, std::chrono::nanoseconds d);
    /// This thread's counters of `policy`.
    OwnedFamily<policy_cell_count>::Cells& policy_cells(std::string_view policy);

    /// ratelimitd_requests_in_flight: the threads' started - finished, at least 0.
    [[nodiscard]] std::int64_t in_flight() const;

    // The parts of render(), in exposition order; each is called with mu_ held.
    void render_checks(std::string& out) const;
    void render_store(std::string& out) const;    // errors, latency
    void render_store_series(std::string& out) const;  // the backend's, when set
    void render_http(std::string& out) const;     // requests by route, connections, in flight
    void render_process(std::string& out) const;  // reloads, access log, process_*
    void render_durations(std::string& out) const;
    void render_policy_totals(std::string& out) const;  // units and denial-cache hits

    const std::uint64_t id_;                      // unique per instance: the thread_local's key
    std::atomic<ThreadCounters*> shards_{nullptr};  // one per thread that counted, newest first
    mutable std::mutex mu_;  // guards the scrape-time readers below, never taken by counting
    std::function<std::vector<MetricFamily>()> store_series_;

    std::array<std::atomic<std::uint64_t>, 3> store_errors_{};  // timeout, unavailable, bad_reply
    std::atomic<std::int64_t> connections_open_{0};
    std::atomic<std::uint64_t> reloads_ok_{0};
    std::atomic<std::uint64_t> reloads_failed_{0};
    std::atomic<bool> last_reload_ok_{true};
    std::atomic<double> last_reload_at_{0};  // Unix seconds
    std::atomic<std::uint64_t> access_log_dropped_{0};
    std::atomic<std::uint64_t> connections_rejected_{0};
    std::atomic<std::uint64_t> connections_accepted_{0};
    std::atomic<std::uint64_t> auth_unmatched_{0};
};

}  // namespace ratelimitd::service
