// The status page's last 15 minutes: a fixed ring of samples, one every 5 s, each the
// difference of the process's running totals since the one before. Its memory is fixed
// (capacity samples of a fixed size: 57,896 bytes with GCC 12), whatever the traffic; the
// check path never touches it: a timer reads the totals the metrics keep anyway
// (Metrics::totals).
#pragma once

#include "ratelimitd/service/metric_totals.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::service {

/// What a sample is the difference of: the metrics' totals and the other parts' counters.
struct StatusInputs {
    MetricTotals metrics;
    std::uint64_t webhooks_sent = 0;     ///< quota webhook events a target accepted
    std::uint64_t webhooks_dropped = 0;  ///< events dropped (queue full)
    std::int64_t held = 0;               ///< /v1/auth answers held for a delay now (a gauge)
};

/// One policy's denials in one sample.
struct PolicyDenials {
    std::string policy;  ///< "" in an unused slot
    std::uint64_t denied = 0;
};

/// How many policies a sample names; the others' denials are summed in denied_other.
inline constexpr std::size_t status_top_policies = 5;

/// One interval of the history.
struct StatusSample {
    std::int64_t at_ms = 0;    ///< the interval's end, Unix epoch ms
    std::int64_t span_ms = 0;  ///< its length: the rates are its counts over it
    std::array<std::uint64_t, 5> checks{};  ///< by Outcome (its enum value)
    std::array<PolicyDenials, status_top_policies> denied{};  ///< the policies that refused most, most first
    std::uint64_t denied_other = 0;
    std::uint64_t store_calls = 0;
    double store_p50_ms = -1;  ///< the upper bound of the latency bucket that holds it; -1: no call
    double store_p99_ms = -1;
    std::uint64_t store_errors = 0;
    std::uint64_t webhooks_sent = 0;
    std::uint64_t webhooks_dropped = 0;
    std::int64_t held = 0;  ///< at the interval's end
};

/// @par Thread Safety
/// record() (the sampler's timer) and samples() (the endpoint, any server thread) take a mutex
/// held for a copy of the ring at most.
class StatusHistory {
public:
    static constexpr std::size_t capacity = 180;             ///< 15 minutes of samples
    static constexpr std::chrono::milliseconds interval{5'000};  ///< between samples

    /// The totals at `now_ms`: a sample of their difference from the last ones (the first call
    /// only remembers them). A total that went down (a counter that restarted) counts from 0.
    void record(std::int64_t now_ms, const StatusInputs& totals);

    /// The samples kept, oldest first.
    [[nodiscard]] std::vector<StatusSample> samples() const;

private:
    mutable std::mutex mu_;
    std::array<StatusSample, capacity> ring_{};
    std::size_t next_ = 0;  ///< where the next sample goes
    std::size_t size_ = 0;
    std::optional<StatusInputs> last_;
    std::int64_t last_ms_ = 0;
};

}  // namespace ratelimitd::service
