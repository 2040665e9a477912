// NotifyMarks: the crossing test of lua/notify/crossings.lua and its claim, in process.
#include "ratelimitd/store/memory/notify_marks.hpp"

#include <algorithm>

namespace ratelimitd::store::memory {

namespace {

/// The end of the window a claim of `p` at `now` holds for (epoch ms) and its name in the marker:
/// a fixed window's own (its reset), else the aligned window of p.window holding now.
struct ClaimWindow {
    std::int64_t end = 0;
    std::string name;
};

ClaimWindow claim_window(const policy::Policy& p, std::int64_t now, const check::WindowState& w) {
    if (policy::traits(p.algorithm).notify_window == policy::NotifyWindow::own_counter) return {now + w.reset_after_ms, {}};
    const std::int64_t window = std::max<std::int64_t>(1, p.window.count());
    const std::int64_t end = (now / window + 1) * window;
    return {end, ":" + std::to_string(end)};
}

}  // namespace

void NotifyMarks::claim_report(const policy::Policy& p, const std::string& key, std::int64_t cost, std::int64_t debt,
                               std::int64_t now, check::WindowState& w) {
    if (!p.notify || cost <= 0) return;
    const ClaimWindow window = claim_window(p, now, w);
    // The units charged in all, past the limit too. The 1.0 threshold (0 units, a check's first
    // denial) is crossed by taking usage past the limit, where a check would have been denied.
    const std::int64_t charged = std::max<std::int64_t>(0, w.limit - w.remaining) + debt;
    const std::int64_t before = charged - cost;
    std::uint8_t crossed = 0;
    for (std::size_t k = 0; k < p.notify->at.size() && k < policy::max_notify_thresholds; ++k) {
        const std::int64_t u = policy::threshold_units(p.notify->at[k], p.limit);
        const bool crossing = u == 0 ? before <= w.limit && charged > w.limit : before < u && charged >= u;
        if (crossing && claim(key + ":notify:" + std::to_string(u) + window.name, window.end, now)) {
            crossed = static_cast<std::uint8_t>(crossed | (1u << k));
        }
    }
    const std::int64_t bound = p.notify->debt;
    const bool passed = bound > 0 && debt >= bound && debt - cost < bound &&
                        claim(key + ":notify:debt:" + std::to_string(bound) + window.name, window.end, now);
    if (passed) w.debt_passed = debt;
    if (crossed != 0) w.crossed = crossed;
    if (passed || crossed != 0) {
        w.window_end_ms = window.end;
        w.crossed_at_s = static_cast<std::uint32_t>(now / 1000);
    }
}

void NotifyMarks::claim_crossings(const policy::Policy& p, const std::string& key, std::int64_t cost,
                                  std::int64_t now, check::WindowState& w) {
    if (!p.notify) return;
    // A denied check of an algorithm that charges it all the same (erl_fixed_window, as
    // crossings.lua's charges_when_denied) crosses thresholds below 1.0 as an admit does.
    const bool charged = w.allowed || p.algorithm == policy::Algorithm::erl_fixed_window;
    const std::int64_t used = std::max<std::int64_t>(0, w.limit - w.remaining) + w.past_limit;
    const std::int64_t before = charged ? used - cost : used;
    const ClaimWindow window = claim_window(p, now, w);
    const std::int64_t window_end = window.end;
    const std::string& window_name = window.name;
    std::uint8_t crossed = 0;
    for (std::size_t k = 0; k < p.notify->at.size() && k < policy::max_notify_thresholds; ++k) {
        const std::int64_t u = policy::threshold_units(p.notify->at[k], p.limit);
        const bool crossing = u == 0 ? !w.allowed : charged && before < u && used >= u;
        if (crossing && claim(key + ":notify:" + std::to_string(u) + window_name, window_end, now)) {
            crossed = static_cast<std::uint8_t>(crossed | (1u << k));
        }
    }
    if (crossed != 0) {
        w.crossed = crossed;
        w.window_end_ms = window_end;
        w.crossed_at_s = static_cast<std::uint32_t>(now / 1000);
    }
}

bool NotifyMarks::claim(const std::string& marker, std::int64_t expires_ms, std::int64_t now) {
    std::lock_guard lock(mutex_);
    if (expiry_.size() >= sweep_at_) {
        std::erase_if(expiry_, [now](const auto& kv) { return kv.second <= now; });
        sweep_at_ = std::max<std::size_t>(1024, expiry_.size() * 2);
    }
    auto [it, fresh] = expiry_.try_emplace(marker, expires_ms);
    if (fresh) return true;
    if (it->second > now) return false;
    it->second = expires_ms;
    return true;
}

std::size_t NotifyMarks::size() const {
    std::lock_guard lock(mutex_);
    return expiry_.size();
}

}  // namespace ratelimitd::store::memory
