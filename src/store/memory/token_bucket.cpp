// lua/token_bucket.lua in C++.
#include "ratelimitd/store/memory/algorithms.hpp"

#include <algorithm>

namespace ratelimitd::store::memory::detail {
namespace {

// A stored bucket's level in policy `p`'s units; a bucket filled under other numbers (a
// reload) keeps its used tokens used (in the new units, rounded up), out of the new burst.
std::int64_t bucket_level(const TokenBucketState& s, const Policy& p) {
    const std::int64_t window = p.window.count();
    if (s.window == window && s.burst == p.burst) return s.level;
    const __int128 used_old = static_cast<__int128>(s.burst) * s.window - s.level;
    const __int128 used = (used_old * window + s.window - 1) / s.window;
    return static_cast<std::int64_t>(std::max<__int128>(0, static_cast<__int128>(p.burst) * window - used));
}

}  // namespace

Reply token_bucket(Map& map, const std::string& key, const Policy& p, std::int64_t cost,
                   std::int64_t now) {
    const std::int64_t limit = p.limit;
    const std::int64_t window = p.window.count();
    const std::int64_t capacity = p.burst * window;
    const std::int64_t need = cost * window;

    Entry* e = find_live(map, key, Algorithm::token_bucket, now);
    std::int64_t level = capacity;
    if (e != nullptr) {
        const auto& s = std::get<TokenBucketState>(e->state);
        const std::int64_t elapsed = std::max<std::int64_t>(0, now - s.t);  // clock stepped back: no refill
        const std::int64_t stored = bucket_level(s, p);
        // min(capacity, l + elapsed * limit) without overflowing when elapsed is huge.
        const std::int64_t missing = capacity - stored;
        level = missing <= 0 || elapsed >= ceil_div(missing, limit) ? capacity
                                                                      : stored + elapsed * limit;
        level = std::min(level, capacity);
    }

    Reply r;
    if (level >= need) {
        r.allowed = true;
        level -= need;
        if (e == nullptr) e = &insert(map, key, Algorithm::token_bucket);
        e->state = TokenBucketState{level, now, window, p.burst};
        e->expire_at = now + ceil_div(capacity - level, limit);
        // reset: when the next whole token is back
        const std::int64_t tokens = floor_div(level, window);
        r.reset_ms = now + ceil_div((tokens + 1) * window - level, limit);
    } else {
        // reset: when `cost` tokens are back; a denied check writes nothing
        r.reset_ms = now + ceil_div(need - level, limit);
    }
    r.remaining = floor_div(level, window);
    return r;
}

}  // namespace ratelimitd::store::memory::detail
