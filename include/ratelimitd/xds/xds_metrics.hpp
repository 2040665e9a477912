// What /metrics says of the xDS config source: connected or not, configs accepted and refused,
// streams opened, and the version in force.
#pragma once

#include <atomic>
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
    /// A config now in force: its version, its domains, when (Unix seconds).
    void count_accepted(const std::string& version, std::size_t domains, std::int64_t now_s);

    /// Configs accepted and refused so far (ERL mode's config_load_success / config_load_error).
    [[nodiscard]] std::uint64_t accepted() const noexcept { return accepted_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t rejected() const noexcept { return rejected_.load(std::memory_order_relaxed); }

    /// Prometheus text of every series (appended to /metrics).
    [[nodiscard]] std::string render() const;

private:
    std::atomic<bool> connected_{false};
    std::atomic<std::uint64_t> streams_{0};
    std::atomic<std::uint64_t> accepted_{0};
    std::atomic<std::uint64_t> rejected_{0};
    mutable std::mutex mu_;  // the three below, written together
    std::string version_;
    std::size_t domains_ = 0;
    std::int64_t accepted_at_s_ = 0;
};

}  // namespace ratelimitd::xds
