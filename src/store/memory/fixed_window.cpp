// lua/fixed_window.lua in C++.
#include "ratelimitd/store/memory/algorithms.hpp"

#include <algorithm>

namespace ratelimitd::store::memory::detail {

Reply fixed_window(Map& map, const std::string& key, const Policy& p, std::int64_t cost,
                   std::int64_t now) {
    const std::int64_t limit = p.limit;
    const std::int64_t window = p.window.count();

    Entry* e = find_live(map, key, Algorithm::fixed_window, now);
    std::int64_t count = e != nullptr ? std::get<FixedWindowState>(e->state).count : 0;
    // The window was shortened on reload: it ends within the new one (the script's PEXPIRE).
    if (e != nullptr && e->expire_at - now > window) e->expire_at = now + window;

    Reply r;
    if (count + cost <= limit) {
        r.allowed = true;
        if (e == nullptr) {
            // A new window: INCRBY creates the counter and PEXPIRE starts the window.
            e = &insert(map, key, Algorithm::fixed_window);
            e->expire_at = now + window;
        }
        count += cost;
        std::get<FixedWindowState>(e->state).count = count;  // INCRBY keeps the TTL
    }
    // PTTL of a live key; a counter of 0 (nothing ever admitted) has no TTL to report.
    const std::int64_t ttl = count > 0 ? e->expire_at - now : 0;
    r.reset_ms = now + ttl;
    r.remaining = std::max<std::int64_t>(0, limit - count);  // the limit may have been lowered
    return r;
}

}  // namespace ratelimitd::store::memory::detail
