// One Prometheus series family as data: what a part of the process (a store backend) adds to
// /metrics without knowing how the exposition is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ratelimitd {

struct MetricSample {
    std::string labels;        ///< inside the braces, e.g. kind="moved"; empty: none
    std::uint64_t value = 0;
};

struct MetricFamily {
    std::string name;          ///< ratelimitd_...
    std::string type;          ///< counter, gauge
    std::string help;          ///< the # HELP text
    std::vector<MetricSample> samples;
};

}  // namespace ratelimitd
