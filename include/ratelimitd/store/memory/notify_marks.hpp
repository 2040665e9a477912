// The embedded store's quota-webhook claims: lua/notify/crossings.lua in C++, with a marker
// per (key, threshold, window) held here instead of in Redis.
#pragma once

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/policy/policy.hpp"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace ratelimitd::store::memory {

/// The markers of the thresholds claimed so far, each until its window ends. Thread-safe.
class NotifyMarks {
public:
    /// Sets w.crossed and w.window_end_ms for the thresholds of p.notify that the check
    /// behind `w` (of `cost` units, decided at `now`, epoch ms) crossed first in its window:
    /// an admitted check that took the units used from below a threshold to it or past it, or,
    /// for 1.0, a denial; each claimed once per window (a fixed window's own, the aligned window
    /// of p.window for the others, whose level falls back). Nothing for a policy without
    /// thresholds.
    void claim_crossings(const policy::Policy& p, const std::string& key, std::int64_t cost, std::int64_t now,
                         check::WindowState& w);

    /// The report behind `w` (of `cost` signed units, decided at `now`, leaving `debt` units
    /// owed), as lua/notify/crossings.lua's notify_report: sets w.crossed for the thresholds
    /// its units charged (limit - remaining + debt) reached from below (1.0: went past the limit), under
    /// the markers claim_crossings claims, so a window's threshold is claimed once whichever
    /// way usage came to it; and w.debt_passed when debt >= p.notify->debt > debt - cost, once
    /// per window. A refund (cost <= 0) claims nothing.
    void claim_report(const policy::Policy& p, const std::string& key, std::int64_t cost, std::int64_t debt,
                      std::int64_t now, check::WindowState& w);

    /// Markers held, expired ones not yet dropped included (tests).
    [[nodiscard]] std::size_t size() const;

private:
    /// True when `marker` was free (absent or expired) and is now held until `expires_ms`.
    bool claim(const std::string& marker, std::int64_t expires_ms, std::int64_t now);

    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::int64_t> expiry_;  ///< marker -> epoch ms it lives to
    std::size_t sweep_at_ = 1024;                           ///< drop expired ones past this size
};

}  // namespace ratelimitd::store::memory
