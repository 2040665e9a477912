// The quota webhooks' series in /metrics: per target sent, failed, retried and attempt latency;
// dropped and queued for the whole process.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace ratelimitd::notify {

/// @par Thread Safety
/// Every member may be called from any thread.
class NotifyMetrics {
public:
    /// Upper bounds (seconds) of the attempt latency histogram's buckets.
    static constexpr std::array<double, 11> latency_buckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                            0.5,   1.0,  2.5,   5.0,  10.0};

    void count_sent(std::string_view target) {
        of(target).sent.fetch_add(1, std::memory_order_relaxed);
        sent_.fetch_add(1, std::memory_order_relaxed);
    }
    void count_failed(std::string_view target) { of(target).failed.fetch_add(1, std::memory_order_relaxed); }
    void count_retried(std::string_view target) { of(target).retried.fetch_add(1, std::memory_order_relaxed); }
    /// One delivery attempt's time, answered or not.
    void observe_attempt(std::string_view target, std::chrono::nanoseconds d);
    void count_dropped() noexcept { dropped_.fetch_add(1, std::memory_order_relaxed); }
    void set_queued(std::size_t n) noexcept { queued_.store(n, std::memory_order_relaxed); }

    [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
    /// Events a target accepted, summed over targets (the status page's webhook count).
    [[nodiscard]] std::uint64_t sent() const noexcept { return sent_.load(std::memory_order_relaxed); }

    /// Prometheus text, `# HELP` and `# TYPE` included; the per-target families have a series
    /// per target that was ever sent to.
    [[nodiscard]] std::string render() const;

private:
    struct PerTarget {
        std::atomic<std::uint64_t> sent{0};
        std::atomic<std::uint64_t> failed{0};
        std::atomic<std::uint64_t> retried{0};
        std::array<std::atomic<std::uint64_t>, latency_buckets.size()> buckets{};
        std::atomic<std::uint64_t> attempts{0};
        std::atomic<std::uint64_t> sum_ns{0};
    };
    PerTarget& of(std::string_view target);

    mutable std::mutex mu_;  // guards the map; the counters are atomics
    std::map<std::string, std::unique_ptr<PerTarget>, std::less<>> targets_;
    std::atomic<std::uint64_t> dropped_{0};
    std::atomic<std::uint64_t> sent_{0};  // the per-target sent counts' sum
    std::atomic<std::size_t> queued_{0};
};

}  // namespace ratelimitd::notify
