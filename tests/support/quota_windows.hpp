// What a fleet of QuotaFilter clients admitted in each whole window of an RLQS budget, and the
// check of the bound of docs/rlqs.md ("The bound") over them.
#pragma once

#include "support/quota_filter.hpp"

#include <cstdint>
#include <map>
#include <vector>

namespace ratelimitd::test {

/// The system clock in ms since the epoch (the clock QuotaFilter stamps admissions with).
std::int64_t now_ms();

/// Waits until the next window of `window_ms` has begun and `windows` whole windows have
/// passed after it.
void run_windows(int windows, std::int64_t window_ms);

/// One window: what the fleet admitted, each client's part, and the streams that began in it
/// (each a new Envoy id for the ledger).
struct QuotaWindow {
    std::int64_t admitted = 0;
    std::int64_t new_streams = 0;
    std::vector<std::int64_t> per_client;
};

/// The whole windows of `window_ms` in [from, to), by index (ms since the epoch / window_ms).
std::map<std::int64_t, QuotaWindow> windows_of(const std::vector<const QuotaFilter*>& clients, std::int64_t from,
                                               std::int64_t to, std::int64_t window_ms);

/// Expects every window within limit + 2 per new stream; prints each window's figures.
void expect_within_bound(const std::map<std::int64_t, QuotaWindow>& windows, const char* phase,
                         std::int64_t global_limit);

}  // namespace ratelimitd::test
