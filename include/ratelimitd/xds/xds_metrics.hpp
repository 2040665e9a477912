// What /metrics says of the xDS config source: connected or not, configs accepted and refused,
// streams opened, and the version in force.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace ratelimitd::xds {

/// @par Thread Safety
/// Every member may be called from any thread.
class XdsMetrics {
public:
    void set_connected(bool connected) noexcept { connected_.store(connected, std::memory_order_relaxed); }
    void count_stream() noexcept { streams_.fetch_add(1, std::memory_order_relaxed); }
    void count_rejected() noexcept { rejected_.fetch_add(1, std::memory_order_relaxed); }
    /// A response dropped unapplied: a newer one arrived before it was started.
    void count_superseded() noexcept { superseded_.fetch_add(1, std::memory_order_relaxed); }
    /// A config now in force: its version, its domains, when (Unix seconds), and how long it
    /// took from its arrival to serving checks (ratelimitd_xds_apply_seconds).
    void count_accepted(const std::string& version, std::size_t domains, std::int64_t now_s,
                        std::chrono::steady_clock::duration took);

    /// Configs accepted and refused so far (ERL mode's config_load_success / config_load_error).
    [[nodiscard]] std::uint64_t accepted() const noexcept { return accepted_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t rejected() const noexcept { return rejected_.load(std::memory_order_relaxed); }

    /// Prometheus text of every series (appended to /metrics).
    [[nodiscard]] std::string render() const;

private:
    [[nodiscard]] std::string render_apply() const;

    std::atomic<bool> connected_{false};
    std::atomic<std::uint64_t> streams_{0};
    std::atomic<std::uint64_t> accepted_{0};
    std::atomic<std::uint64_t> rejected_{0};
    std::atomic<std::uint64_t> superseded_{0};
    mutable std::mutex mu_;  // the members below, written together
    std::string version_;
    std::size_t domains_ = 0;
    std::int64_t accepted_at_s_ = 0;
    double last_apply_s_ = 0;
    std::array<std::uint64_t, 10> apply_buckets_{};  // per bound of apply_bounds, not cumulative
    std::uint64_t applies_ = 0;
    double apply_sum_s_ = 0;
};

}  // namespace ratelimitd::xds
