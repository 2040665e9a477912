// The running totals the status page's history samples: what /metrics would show, summed over
// the server threads, without rendering the exposition text.
#pragma once

#include "ratelimitd/service/thread_counters.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace ratelimitd::service {

/// Totals since start. Counters only rise, except across a restart of the process.
struct MetricTotals {
    std::array<std::uint64_t, 5> checks{};               ///< by Outcome (its enum value)
    std::map<std::string, std::uint64_t> denied;         ///< policy -> checks it refused (denied, failed_closed)
    std::array<std::uint64_t, store_latency_buckets.size()> store_latency{};  ///< per bucket, not cumulative
    std::uint64_t store_latency_over = 0;                 ///< store latencies above the last bucket
    std::uint64_t store_errors = 0;                       ///< all kinds
};

}  // namespace ratelimitd::service
