// Bounds the audit entries of admin calls: a flood of refused (or allowed) calls becomes a few
// lines with counts, never one line per call, so it cannot fill the disk or push the reloads
// and resets out of the kept entries.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace ratelimitd::audit {

struct AdminCallLimits {
    /// One entry per key (peer, door, outcome) per interval; the calls between are counted.
    std::chrono::milliseconds interval{60'000};
    /// At most this many admin-call entries per interval, all keys together (many peers).
    std::size_t per_interval = 60;
};

/// Whether one call gets an entry, and the calls it stands for that had none.
struct AdminCallNote {
    bool write = false;
    std::uint64_t repeats = 0;   ///< calls of the same key since its last entry, not written
    std::uint64_t unlogged = 0;  ///< calls of other keys not written (the budget was spent)
};

/// The first call of a key writes; its further calls within `interval` are counted and show
/// as `repeats` on the key's next entry. Over `per_interval` entries in one interval, calls
/// are only counted and show as `unlogged` on the next entry written. Keys are forgotten once
/// their interval is over (their count then moves to `unlogged`), so at most
/// 2 x per_interval keys are held whatever the peers.
/// @par Thread Safety
/// None: AuditTrail calls it under its lock.
class AdminCallCoalescer {
public:
    explicit AdminCallCoalescer(AdminCallLimits limits = {}) : limits_(limits) {}

    AdminCallNote note(const std::string& key, std::int64_t now_ms);

    [[nodiscard]] std::size_t keys_held() const noexcept { return keys_.size(); }

private:
    struct KeyState {
        std::int64_t written_ms = 0;
        std::uint64_t folded = 0;
    };
    void forget_expired(std::int64_t now_ms);

    AdminCallLimits limits_;
    std::map<std::string, KeyState, std::less<>> keys_;
    std::int64_t window_start_ms_ = 0;
    std::size_t written_in_window_ = 0;
    std::uint64_t unlogged_ = 0;
};

}  // namespace ratelimitd::audit
