// DelayDistribution: a sorted map of counts, walked once per percentile.
#include "ratelimitd/simulate/delay_distribution.hpp"

#include <algorithm>
#include <cmath>

namespace ratelimitd::simulate {

void DelayDistribution::add(std::int64_t delay_ms) {
    const std::int64_t key = delay_ms < 1000 ? delay_ms : (delay_ms + 999) / 1000 * 1000;
    ++counts_[key];
    ++count_;
    max_ = std::max(max_, delay_ms);
}

std::int64_t DelayDistribution::percentile(double fraction) const {
    if (count_ == 0) return 0;
    const auto wanted = static_cast<std::uint64_t>(std::ceil(fraction * static_cast<double>(count_)));
    std::uint64_t seen = 0;
    for (const auto& [delay, n] : counts_) {
        seen += n;
        if (seen >= wanted) return std::min(delay, max_);
    }
    return max_;
}

}  // namespace ratelimitd::simulate
