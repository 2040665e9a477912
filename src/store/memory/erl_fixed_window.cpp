// lua/erl_fixed_window.lua in C++. The embedded store shares no keys with anyone: the
// accounting is envoyproxy/ratelimit's, the counter lives one unit (jitter would only keep
// it longer) and its window is in its key's name, as the planner writes it.
#include "ratelimitd/store/memory/algorithms.hpp"
#include "ratelimitd/store/memory/entry.hpp"

#include <algorithm>

namespace ratelimitd::store::memory::detail {
namespace {

Reply charge(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now,
             bool always_admitted) {
    Entry* e = find_live(map, key, Algorithm::erl_fixed_window, now);
    if (e == nullptr) e = &insert(map, key, Algorithm::erl_fixed_window);
    auto& count = std::get<ErlFixedWindowState>(e->state).count;
    count += cost;                                      // INCRBY, past the limit too
    const std::int64_t window = std::max<std::int64_t>(1, p.window.count());
    e->expire_at = now + window;                        // EXPIRE on every charge
    Reply r;
    r.allowed = always_admitted || count <= p.limit;
    r.remaining = p.limit - count;                      // negative past the limit (multi's fit test)
    r.reset_ms = (now / window + 1) * window;           // the window's end, for everyone at once
    return r;
}

}  // namespace

Reply ErlFixedWindow::check(Map& map, const Key& key, const Policy& p, std::int64_t cost,
                            std::int64_t now) {
    return charge(map, key, p, cost, now, false);
}

Reply ErlFixedWindow::report(Map& map, const Key& key, const Policy& p, std::int64_t cost,
                             std::int64_t now) {
    Reply r = charge(map, key, p, cost, now, true);
    r.debt = std::max<std::int64_t>(0, -r.remaining);
    return r;
}

}  // namespace ratelimitd::store::memory::detail
