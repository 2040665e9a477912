// lua/sliding_window.lua in C++.
#include "ratelimitd/store/memory/algorithms.hpp"
#include "ratelimitd/store/memory/entry.hpp"

#include <algorithm>

namespace ratelimitd::store::memory::detail {

namespace {

// The windows as they stand at `now`: a stored state rolled forward (SlidingWindowState's
// start, cur and prev; window is the policy's), or a window opening now.
SlidingWindowState rolled(const Entry* e, std::int64_t window, std::int64_t now) {
    SlidingWindowState w{now, 0, 0, window};
    if (e == nullptr) return w;
    const auto& s = std::get<SlidingWindowState>(e->state);
    const std::int64_t opened = std::min(s.start, now);  // clock stepped back: stay in the window
    const std::int64_t passed = (now - opened) / s.window;
    if (s.window != window) {
        // The window changed on reload: what still weighs in the old sliding window counts
        // as admitted now, in a window of the new length that opens now.
        if (passed == 0) w.cur = s.cur + s.prev;
        if (passed == 1) w.cur = s.cur;
    } else if (passed == 0) {
        w.start = opened;
        w.cur = s.cur;
        w.prev = s.prev;
    } else if (passed == 1) {
        w.start = opened + window;
        w.prev = s.cur;
    }  // two windows or more: a new one opens now
    return w;
}

}  // namespace

// lua/sliding_window.lua: counts weighted by milliseconds of the window, in integers.
Reply SlidingWindow::check(Map& map, const Key& key, const Policy& p, std::int64_t cost,
                     std::int64_t now) {
    const std::int64_t limit = p.limit;
    const std::int64_t window = p.window.count();

    Entry* e = find_live(map, key, Algorithm::sliding_window, now);
    const SlidingWindowState w = rolled(e, window, now);
    const std::int64_t start = w.start;
    std::int64_t cur = w.cur;
    const std::int64_t prev = w.prev;

    const std::int64_t elapsed = now - start;
    const std::int64_t weighted = prev * (window - elapsed) + cur * window;
    std::int64_t remaining = std::max<std::int64_t>(0, floor_div(limit * window - weighted, window));

    // Earliest ms at which `want` units fit with no further check (see the script).
    const auto fits_at = [&](std::int64_t want) -> std::int64_t {
        std::int64_t room = limit - cur - want;
        if (room >= 0) {
            if (prev == 0) return now;
            const std::int64_t at = window - room * window / prev;
            if (at < window) return start + std::max(elapsed, at);
        }
        room = limit - want;
        if (cur == 0) return start + window;
        return start + window + std::max<std::int64_t>(0, window - room * window / cur);
    };

    Reply r;
    if (cost <= remaining) {
        r.allowed = true;
        cur += cost;
        if (e == nullptr) e = &insert(map, key, Algorithm::sliding_window);
        e->state = SlidingWindowState{start, cur, prev, window};
        e->expire_at = start + 2 * window;  // PEXPIRE start + 2 windows - now
        remaining -= cost;
        r.reset_ms = remaining >= limit ? now : fits_at(remaining + 1);
    } else {
        r.reset_ms = fits_at(cost);  // a denied check writes nothing
    }
    r.remaining = remaining;
    return r;
}

// The script's report mode: the current count may pass the limit, the estimate by max_debt at
// most (a debt that fades as the windows slide on; a count already past it is never raised); a
// refund takes back units of the current window only, down to 0.
Reply SlidingWindow::report(Map& map, const Key& key, const Policy& p, std::int64_t cost,
                            std::int64_t now) {
    const std::int64_t window = p.window.count();
    Entry* e = find_live(map, key, Algorithm::sliding_window, now);
    const SlidingWindowState w = rolled(e, window, now);
    const std::int64_t most =
        floor_div((p.limit + p.debt_bound()) * window - w.prev * (window - (now - w.start)), window);
    const std::int64_t cur = std::max<std::int64_t>(0, std::min(w.cur + cost, std::max(w.cur, most)));
    if (e == nullptr) e = &insert(map, key, Algorithm::sliding_window);
    e->state = SlidingWindowState{w.start, cur, w.prev, window};
    e->expire_at = w.start + 2 * window;
    // What the check path answers for a cost of 0 on the new state is this reply, admitted.
    Reply r = SlidingWindow::check(map, key, p, 0, now);
    r.allowed = true;
    const std::int64_t weighted = w.prev * (window - (now - w.start)) + cur * window;
    r.debt = std::max<std::int64_t>(0, floor_div(weighted - p.limit * window, window));
    return r;
}

}  // namespace ratelimitd::store::memory::detail
