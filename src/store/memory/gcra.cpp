// lua/gcra.lua in C++.
#include "ratelimitd/store/memory/algorithms.hpp"
#include "ratelimitd/store/memory/entry.hpp"

#include <algorithm>

namespace ratelimitd::store::memory::detail {
namespace {

// gcra.lua's debt (TAT - now, in units of 1/limit ms) of a stored TAT: beyond the capacity
// after a report's debt, which is kept in full; a TAT written under other numbers (a reload)
// owes the same units, rounded up.
std::int64_t gcra_debt(const GcraState& s, const Policy& p, std::int64_t now) {
    const std::int64_t ahead = s.ms - now;
    if (ahead < 0) return 0;
    const __int128 owed = static_cast<__int128>(ahead) * s.limit + s.f;  // in units of 1/s.limit ms
    if (s.limit == p.limit && s.window == p.window.count()) {
        return static_cast<std::int64_t>(std::min<__int128>(deepest_read_debt, owed));
    }
    const __int128 converted = (owed * p.window.count() + s.window - 1) / s.window;
    return static_cast<std::int64_t>(std::min<__int128>(deepest_read_debt, converted));
}

}  // namespace

// lua/gcra.lua: time in units of 1/limit ms, so the emission interval is window units and
// `debt` (TAT - now) is token_bucket's capacity - level.
Reply Gcra::check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now) {
    return reserve(map, key, p, cost, now, 0);
}

Reply Gcra::reserve(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now,
                    std::int64_t queue) {
    const std::int64_t limit = p.limit;
    const std::int64_t window = p.window.count();
    const std::int64_t capacity = p.burst * window;
    const std::int64_t need = cost * window;

    Entry* e = find_live(map, key, Algorithm::gcra, now);
    std::int64_t debt = 0;
    if (e != nullptr) {
        debt = gcra_debt(std::get<GcraState>(e->state), p, now);
    }

    std::int64_t level = capacity - debt;
    const auto charge = [&] {
        level -= need;
        const std::int64_t owed = debt + need;
        if (e == nullptr) e = &insert(map, key, Algorithm::gcra);
        e->state = GcraState{now + owed / limit, owed % limit, limit, window};
        e->expire_at = now + ceil_div(owed, limit);  // SET ... PX: until the TAT is past
    };
    Reply r;
    if (level >= need) {
        r.allowed = true;
        charge();
        // reset: when the next whole unit is back
        const std::int64_t tokens = floor_div(level, window);
        r.reset_ms = tokens >= p.burst ? now : now + ceil_div((tokens + 1) * window - level, limit);
    } else if (queue > 0 && need - level <= queue) {
        // reserved: the TAT moves past the burst, so later checks queue after this one
        r.allowed = true;
        r.delay_ms = ceil_div(need - level, limit);
        charge();
        // reset: when the next whole unit is usable, after every reservation
        r.reset_ms = now + ceil_div(window - level, limit);
    } else {
        // reset: when `cost` units (less the queue it may reserve) are back; a denied check
        // writes nothing
        r.reset_ms = now + ceil_div(need - level - queue, limit);
    }
    r.remaining = std::max<std::int64_t>(0, floor_div(level, window));
    return r;
}

// gcra.lua's report mode: the debt grows by `cost` units, to burst + max_debt units owed at most
// (a negative cost: shrinks, to 0).
Reply Gcra::report(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now) {
    const std::int64_t limit = p.limit;
    const std::int64_t window = p.window.count();
    const std::int64_t capacity = p.burst * window;

    Entry* e = find_live(map, key, Algorithm::gcra, now);
    const std::int64_t debt = e != nullptr ? gcra_debt(std::get<GcraState>(e->state), p, now) : 0;
    const std::int64_t owed = std::clamp<std::int64_t>(debt + cost * window, 0, capacity + p.debt_bound() * window);
    if (owed == 0) {
        if (e != nullptr) map.erase(key);  // nothing owed: the missing key means exactly that
    } else {
        if (e == nullptr) e = &insert(map, key, Algorithm::gcra);
        e->state = GcraState{now + owed / limit, owed % limit, limit, window};
        e->expire_at = now + ceil_div(owed, limit);
    }
    return token_report_reply(capacity - owed, p, now);
}

}  // namespace ratelimitd::store::memory::detail
