// The delays one policy gave in a replay (max_delay policies, docs/policies.md "Delaying"):
// counted per delay, so its memory is bounded by the delays' range, never by the log's lines.
#pragma once

#include <cstdint>
#include <map>

namespace ratelimitd::simulate {

/// Delays to the millisecond below 1 s and to the whole second (rounded up) above: at most
/// 1,000 + 3,600 counters (max_delay is at most 1 h).
class DelayDistribution {
public:
    void add(std::int64_t delay_ms);
    [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
    /// The smallest counted delay with at least `fraction` (0..1] of the delays at or below
    /// it, in ms; 0 when none was counted.
    [[nodiscard]] std::int64_t percentile(double fraction) const;
    [[nodiscard]] std::int64_t max() const noexcept { return max_; }

private:
    std::map<std::int64_t, std::uint64_t> counts_;
    std::uint64_t count_ = 0;
    std::int64_t max_ = 0;
};

}  // namespace ratelimitd::simulate
