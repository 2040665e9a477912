// What the delays of max_delay policies cost (docs/policies.md "Delaying"): checks admitted
// with a delay, their delays, the /v1/auth answers held now, and those refused because too
// many were held.
#pragma once

#include "ratelimitd/service/held_slot.hpp"
#include "ratelimitd/service/policy_holds.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::service {

/// Which door answered a delayed check.
enum class DelayDoor { check, auth };

/// A policy that delayed a check, and its own bound on held answers (absent: none).
struct DelayingPolicy {
    std::string_view name;
    std::optional<std::int64_t> max_held;
};

/// Process-wide, lock-free but for a policy's first held answer (PolicyHolds).
/// @par Thread Safety
/// Every member may be called from any thread.
class DelayMetrics {
public:
    /// Upper bounds (seconds) of ratelimitd_check_delay_seconds: from one step of a fast
    /// rate to longest_max_delay.
    static constexpr std::array<double, 12> delay_buckets = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 3600};

    /// A check admitted with a delay of `delay_ms` at `door`.
    void observe_delay(DelayDoor door, std::int64_t delay_ms) noexcept;

    /// One more /v1/auth answer held, for `delaying` (at least one), unless `process_bound`
    /// are held already or one of them holds its max_held: then it is counted as refused
    /// under that policy (the first one for the process bound) and an empty slot is returned.
    /// The slot is given back when it goes.
    [[nodiscard]] HeldSlot try_hold(std::size_t process_bound, std::span<const DelayingPolicy> delaying);

    /// Answers held now (ratelimitd_held_requests).
    [[nodiscard]] std::int64_t held() const noexcept { return held_.load(std::memory_order_relaxed); }

    /// The four families in Prometheus text, `# HELP`/`# TYPE` lines included.
    void render(std::string& out) const;

private:
    std::array<std::atomic<std::uint64_t>, 2> delayed_{};  // by DelayDoor
    std::array<std::atomic<std::uint64_t>, delay_buckets.size()> buckets_{};  // not cumulative
    std::atomic<std::uint64_t> count_{0};
    std::atomic<std::uint64_t> sum_ms_{0};
    std::atomic<std::int64_t> held_{0};
    PolicyHolds policies_;
};

}  // namespace ratelimitd::service
