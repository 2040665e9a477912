// Counters and histograms of what the service decides, rendered in Prometheus text format.
#pragma once

#include "ratelimitd/core/error.hpp"

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

namespace ratelimitd::service {

/// What the embedded store reports at each scrape.
/// What the Redis store's coalescing did, summed over server threads (read at scrape).
struct CoalescingStats {
    std::uint64_t script_calls = 0;  ///< calls sent for apply(): one per batch
    std::uint64_t checks = 0;        ///< checks those calls carried
};

/// Redirects the Redis Cluster store followed, summed over server threads (read at scrape).
struct ClusterRedirects {
    std::uint64_t moved = 0;
    std::uint64_t ask = 0;
};

struct MemoryStoreStats {
    std::uint64_t keys = 0;       ///< keys held, expired ones not yet swept included
    std::uint64_t evictions = 0;  ///< live keys dropped to stay within memory_max_keys
};

/// How a check ended, as counted by ratelimitd_checks_total{verdict=...}.
enum class Outcome { allowed, denied, shadow_denied, degraded_allowed, failed_closed };

const char* to_string(Outcome o) noexcept;

/// Process-wide metrics. Labels are bounded: policy names come from the registry, routes from
/// the endpoint table, statuses from HTTP; no tenant, key or secret is ever a label value.
/// @par Thread Safety
/// Every member may be called from any thread.
class Metrics {
public:
    /// Upper bounds (seconds) of the store latency histogram's buckets.
    static constexpr std::array<double, 12> latency_buckets{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                            0.01,   0.025,   0.05,   0.1,   0.25,   1.0};

    void count_check(std::string_view policy, Outcome outcome, bool near_limit);
    void count_store_error(errc code);
    void observe_store_latency(std::chrono::nanoseconds d);
    /// `route` is an endpoint path from the router's table, or "other".
    void count_http(std::string_view route, unsigned status);
    void connection_opened() noexcept { connections_open_.fetch_add(1, std::memory_order_relaxed); }
    void connection_closed() noexcept { connections_open_.fetch_sub(1, std::memory_order_relaxed); }
    void request_started() noexcept { in_flight_.fetch_add(1, std::memory_order_relaxed); }
    void request_finished() noexcept { in_flight_.fetch_sub(1, std::memory_order_relaxed); }
    void count_reload(bool ok) noexcept { (ok ? reloads_ok_ : reloads_failed_).fetch_add(1, std::memory_order_relaxed); }
    void count_access_log_dropped() noexcept { access_log_dropped_.fetch_add(1, std::memory_order_relaxed); }
    /// A connection refused because max_connections were open.
    void count_connection_rejected() noexcept { connections_rejected_.fetch_add(1, std::memory_order_relaxed); }

    /// Reports how many server threads have their circuit breaker open (a gauge read at scrape).
    void set_breaker_gauge(std::function<int()> open_breakers);

    /// Reports the Redis store's coalescing (read at scrape). Unset: not rendered.
    void set_coalescing_stats(std::function<CoalescingStats()> stats);

    /// Reports the Redis Cluster store's redirects (read at scrape). Unset: not rendered.
    void set_cluster_redirects(std::function<ClusterRedirects()> redirects);

    /// Reports the embedded store's keys and evictions (read at scrape). Unset (the Redis
    /// store): those series are not rendered.
    void set_memory_store_stats(std::function<MemoryStoreStats()> stats);

    /// The whole exposition, `# HELP`/`# TYPE` lines included.
    std::string render(std::string_view version, std::string_view store) const;

private:
    struct PolicyCounters {
        std::array<std::atomic<std::uint64_t>, 5> by_outcome{};
        std::atomic<std::uint64_t> near_limit{0};
    };
    PolicyCounters& for_policy(std::string_view policy);

    // The parts of render(), in exposition order; each is called with mu_ held.
    void render_checks(std::string& out) const;
    void render_store(std::string& out) const;    // errors, latency, breakers
    void render_redis(std::string& out) const;    // coalescing and Cluster redirects, when set
    void render_http(std::string& out) const;     // requests by route, connections, in flight
    void render_process(std::string& out) const;  // embedded store, reloads, access log

    mutable std::mutex mu_;  // guards the maps' shape, not the counters
    std::map<std::string, std::unique_ptr<PolicyCounters>, std::less<>> policies_;
    std::map<std::pair<std::string, unsigned>, std::uint64_t> http_;
    std::function<int()> open_breakers_;
    std::function<MemoryStoreStats()> memory_store_stats_;
    std::function<CoalescingStats()> coalescing_stats_;
    std::function<ClusterRedirects()> cluster_redirects_;

    std::array<std::atomic<std::uint64_t>, 3> store_errors_{};  // timeout, unavailable, bad_reply
    std::array<std::atomic<std::uint64_t>, latency_buckets.size()> latency_counts_{};
    std::atomic<std::uint64_t> latency_total_{0};
    std::atomic<std::uint64_t> latency_sum_ns_{0};
    std::atomic<std::int64_t> connections_open_{0};
    std::atomic<std::int64_t> in_flight_{0};
    std::atomic<std::uint64_t> reloads_ok_{0};
    std::atomic<std::uint64_t> reloads_failed_{0};
    std::atomic<std::uint64_t> access_log_dropped_{0};
    std::atomic<std::uint64_t> connections_rejected_{0};
};

}  // namespace ratelimitd::service
