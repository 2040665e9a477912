// The answer of a store for one check: allowed or not, and the numbers behind it.
#pragma once

#include <cstdint>
#include <string>
#include <boost/container/small_vector.hpp>

namespace ratelimitd::check {

/// The state of one limit (one window of one policy) after a check.
/// All numbers come from the store's clock (Redis TIME for the Redis store).
struct WindowState {
    std::string policy;            ///< IETF policy item name, e.g. "api-default"
    bool allowed = false;          ///< did this window admit the request
    std::int64_t limit = 0;        ///< quota per window (token bucket: refill per window)
    std::int64_t window_s = 0;     ///< window length in whole seconds (IETF w, at least 1)
    std::int64_t remaining = 0;    ///< units still available after this check
    std::int64_t reset_epoch_s = 0;   ///< Unix epoch seconds, see docs/api.md "Headers" per algorithm
    std::int64_t reset_after_s = 0;   ///< whole seconds until reset, rounded up (IETF t)
    std::int64_t retry_after_s = 0;   ///< seconds to wait before retrying; >= 1 when denied
    std::int64_t reset_after_ms = 0;  ///< milliseconds until reset, unrounded (denial cache)
    /// Units counted past the limit after this check, where the store keeps counting past it
    /// (envoyproxy/ratelimit's fixed window: its count minus its limit); 0 otherwise, and for
    /// an answer from the denial cache. envoyproxy/ratelimit's stats split a crossing call's
    /// hits by it (stats::ErlStats).
    std::int64_t past_limit = 0;
    /// concurrency: the id of the lease this admitted check holds (release it with
    /// /v1/release); empty for other algorithms, for denials, and for a layered check that
    /// did not charge.
    std::string lease;
    /// Quota webhooks: bit k set when this check crossed threshold k of its policy's
    /// notify.at first in its window (claimed in the store, so once across the fleet); 0 for a
    /// policy without thresholds. crossed_at_s: the store's clock when it was claimed (Redis
    /// TIME), epoch seconds rounded down (32 bits, in the padding after `crossed`: a waiting
    /// call's frame has no byte to spare, road.hpp). window_end_ms: the end of that window,
    /// epoch ms.
    std::uint8_t crossed = 0;
    std::uint32_t crossed_at_s = 0;
    std::int64_t window_end_ms = 0;
    /// Quota webhooks: a report that took the key's debt past its policy's notify.debt bound
    /// first in its window (claimed in the store): the debt it left, in units; 0 otherwise.
    std::int64_t debt_passed = 0;
    /// A policy with max_delay (or delay): admitted now, to go ahead after this many ms (its
    /// reservation is charged already); 0 for an admit at once and for every denial.
    std::int64_t delay_ms = 0;
};

/// The windows of a verdict. Most checks decide one, so it lives inside the verdict: a check
/// allocates nothing for it (a layered or multi-window one spills to the heap).
using WindowStates = boost::container::small_vector<WindowState, 1>;

/// The verdict of a check: allowed only if every window allowed.
struct Verdict {
    bool allowed = false;
    WindowStates windows;              ///< at least one entry
    bool from_denial_cache = false;    ///< answered by the denial cache, not the store (metrics)

    /// The window to report in the single-valued fields: the first that denied, or, when
    /// allowed, the one with the least remaining.
    [[nodiscard]] const WindowState& reported() const;

    /// How long the caller waits before going ahead: the longest delay of its windows (0 when
    /// denied or admitted at once).
    [[nodiscard]] std::int64_t delay_ms() const noexcept {
        std::int64_t most = 0;
        for (const auto& w : windows) most = w.delay_ms > most ? w.delay_ms : most;
        return allowed ? most : 0;
    }

    /// The lease an admitted concurrency check holds (the first window with one), or nullptr.
    [[nodiscard]] const std::string* lease() const noexcept {
        for (const auto& w : windows) {
            if (!w.lease.empty()) return &w.lease;
        }
        return nullptr;
    }
};

}  // namespace ratelimitd::check
