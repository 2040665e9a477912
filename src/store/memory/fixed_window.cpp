// lua/fixed_window.lua in C++.
#include "ratelimitd/store/memory/algorithms.hpp"
#include "ratelimitd/store/memory/entry.hpp"

#include "ratelimitd/core/calendar.hpp"
#include "ratelimitd/policy/key.hpp"

#include <algorithm>
#include <optional>

namespace ratelimitd::store::memory::detail {
namespace {

// The counter a check at `now` counts in: the key itself, or with `align: calendar` the
// period's own key (as the script appends it), and how long a new counter lives.
struct Counter {
    std::int64_t length = 0;              // a new counter's TTL
    std::optional<std::int64_t> end_ms;   // a calendar period's end: the reset, whatever the count
};

// `period_key` gets the calendar period's key (the counter's key then), else stays empty.
Counter counter_at(const Key& key, const Policy& p, std::int64_t now, std::string& period_key) {
    // The script's `life`: a counter lives through its expiry millisecond (expired()), so it
    // expires window - 1 ms after it opens and the next window opens `window` ms after.
    if (!p.calendar) return Counter{std::max<std::int64_t>(1, p.window.count() - 1), std::nullopt};
    const CalendarPeriod period = calendar_period(*p.calendar, p.utc_offset_minutes, now);
    period_key = policy::calendar_period_key(key.text, period.start_ms);
    return Counter{period.end_ms - now, period.end_ms};
}

// The script's last lines: PTTL of a live counter (0 for a count of 0), remaining. A counter
// lives through its expiry millisecond (expired()), so the new window opens the one after.
Reply counter_reply(bool allowed, std::int64_t count, const Entry* e, const Counter& c, const Policy& p,
                    std::int64_t now) {
    Reply r;
    r.allowed = allowed;
    const std::int64_t ttl = count > 0 && e != nullptr ? e->expire_at - now : 0;
    r.reset_ms = c.end_ms ? *c.end_ms : count > 0 ? now + ttl + 1 : now;
    r.remaining = std::max<std::int64_t>(0, p.limit - count);  // the limit may have been lowered
    return r;
}

}  // namespace

Reply FixedWindow::check(Map& map, const Key& key, const Policy& p, std::int64_t cost,
                   std::int64_t now) {
    std::string period_key;
    const Counter c = counter_at(key, p, now, period_key);
    const Key counter_key = p.calendar ? Key(period_key) : key;
    Entry* e = find_live(map, counter_key, Algorithm::fixed_window, now);
    std::int64_t count = e != nullptr ? std::get<FixedWindowState>(e->state).count : 0;
    // The window was shortened on reload: it ends within the new one (the script's PEXPIRE).
    if (e != nullptr && e->expire_at - now > c.length) e->expire_at = now + c.length;

    const bool allowed = count + cost <= p.limit;
    if (allowed) {
        if (e == nullptr) {
            // A new window: INCRBY creates the counter and PEXPIRE starts the window.
            e = &insert(map, counter_key, Algorithm::fixed_window);
            e->expire_at = now + c.length;
        }
        count += cost;
        std::get<FixedWindowState>(e->state).count = count;  // INCRBY keeps the TTL
    }
    return counter_reply(allowed, count, e, c, p, now);
}

// The script's report mode: the count may pass the limit by max_debt at most (a debt until the
// window ends; a count already past it is never raised); a refund stops at an empty window.
Reply FixedWindow::report(Map& map, const Key& key, const Policy& p, std::int64_t cost,
                          std::int64_t now) {
    std::string period_key;
    const Counter c = counter_at(key, p, now, period_key);
    const Key counter_key = p.calendar ? Key(period_key) : key;
    Entry* e = find_live(map, counter_key, Algorithm::fixed_window, now);
    const std::int64_t was = e != nullptr ? std::get<FixedWindowState>(e->state).count : 0;
    const std::int64_t count = std::min(std::max(was, p.limit + p.debt_bound()), std::max<std::int64_t>(0, was + cost));
    if (e == nullptr && count > 0) {
        e = &insert(map, counter_key, Algorithm::fixed_window);
        e->expire_at = now + c.length;
    }
    if (e != nullptr) {
        std::get<FixedWindowState>(e->state).count = count;  // SET ... KEEPTTL
        if (count > 0 && e->expire_at - now > c.length) e->expire_at = now + c.length;
    }
    Reply r = counter_reply(true, count, e, c, p, now);
    r.debt = std::max<std::int64_t>(0, count - p.limit);
    return r;
}

}  // namespace ratelimitd::store::memory::detail
