// Where a chart's time axis is labelled: a few round times across the span, so a reader can
// tell when a burst happened without counting minutes from the first label.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ratelimitd::simulate {

/// One label of a time axis.
struct TimeTick {
    std::int64_t at_ms = 0;  ///< Unix epoch ms
    std::string label;       ///< "HH:MM" UTC, or "MM-DD HH:MM" when the span crosses a day
};

/// At most `most` (>= 2) ticks in [first_ms, last_ms], on the smallest round step (1, 2, 5,
/// 10, 15, 30 minutes, 1, 2, 3, 6, 12 hours, then whole days) that keeps them within `most`.
/// A span shorter than a minute gives one tick, at its first minute.
std::vector<TimeTick> time_ticks(std::int64_t first_ms, std::int64_t last_ms, std::size_t most);

}  // namespace ratelimitd::simulate
