// AdminCallCoalescer: one entry per peer, door and outcome per interval, a budget over all.
#include "ratelimitd/audit/admin_call_coalescer.hpp"

namespace ratelimitd::audit {

AdminCallNote AdminCallCoalescer::note(const std::string& key, std::int64_t now_ms) {
    const std::int64_t interval = limits_.interval.count();
    if (now_ms - window_start_ms_ >= interval) {
        window_start_ms_ = now_ms;
        written_in_window_ = 0;
    }
    auto it = keys_.find(key);
    if (it != keys_.end() && now_ms - it->second.written_ms < interval) {
        ++it->second.folded;
        return {};
    }
    if (written_in_window_ >= limits_.per_interval) {
        ++unlogged_;
        return {};
    }
    AdminCallNote out{.write = true, .repeats = it == keys_.end() ? 0 : it->second.folded, .unlogged = unlogged_};
    unlogged_ = 0;
    ++written_in_window_;
    if (it == keys_.end()) {
        keys_.emplace(key, KeyState{now_ms, 0});
    } else {
        it->second = KeyState{now_ms, 0};
    }
    if (keys_.size() > 2 * limits_.per_interval) forget_expired(now_ms);
    return out;
}

// A key past its interval would write on its next call anyway: its count is kept as unlogged.
void AdminCallCoalescer::forget_expired(std::int64_t now_ms) {
    for (auto it = keys_.begin(); it != keys_.end();) {
        if (now_ms - it->second.written_ms >= limits_.interval.count()) {
            unlogged_ += it->second.folded;
            it = keys_.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace ratelimitd::audit
