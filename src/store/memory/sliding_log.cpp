// lua/sliding_log.lua in C++.
#include "ratelimitd/store/memory/algorithms.hpp"
#include "ratelimitd/store/memory/entry.hpp"

#include <algorithm>
#include <iterator>

namespace ratelimitd::store::memory::detail {
namespace {

using Marks = std::vector<Mark>;

Marks::iterator live_begin(SlidingLogState& s) { return s.marks.begin() + static_cast<std::ptrdiff_t>(s.head); }

// The running total after the newest live mark (the base when none is live).
std::int64_t total_of(const SlidingLogState& s) { return s.marks.size() > s.head ? s.marks.back().cum : s.base; }

// ZREMRANGEBYSCORE -inf..after: exactly the marks before `first`, whose running total before
// it is `before`.
void drop_before(SlidingLogState& s, Marks::iterator first, std::int64_t before) {
    s.head = static_cast<std::size_t>(first - s.marks.begin());
    s.base = before;
    // Compact once half the vector is dead, so removal stays O(1) amortised.
    if (s.head > 0 && s.head * 2 >= s.marks.size()) {
        s.marks.erase(s.marks.begin(), s.marks.begin() + static_cast<std::ptrdiff_t>(s.head));
        s.head = 0;
        if (s.marks.capacity() > 2 * s.marks.size() + 8) s.marks.shrink_to_fit();
    }
}

// ZADD of one entry of `units` scored now: a check's (or a report's within the limit), or a
// report's that went past it (`debt`), which joins a debt entry that is the newest, moved to
// now. The script keeps one sorted-set entry per call; a mark merges the calls of one
// millisecond, which changes no total and no time, but never a debt entry with another.
void add_entry(SlidingLogState& s, std::int64_t units, std::int64_t now, bool debt) {
    const bool live = s.marks.size() > s.head;
    // Score order is running-total order: a clock that stepped back logs at the newest score.
    const std::int64_t at = live ? std::max(now, s.marks.back().ms) : now;
    if (live && debt && s.last_is_debt) {
        s.marks.back().ms = at;
        s.marks.back().cum += units;
    } else if (live && !debt && !s.last_is_debt && s.marks.back().ms == at) {
        s.marks.back().cum += units;
    } else {
        s.marks.push_back(Mark{at, total_of(s) + units});
    }
    s.last_is_debt = debt;
}

// The script, checking (admit when it fits) or reporting (log the units without asking, past
// the limit by the policy's max_debt at most: a debt repaid as the entries leave the window).
Reply log_step(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now,
               bool report) {
    const std::int64_t limit = p.limit;
    const std::int64_t window = p.window.count();
    const std::int64_t after = now - window;  // exclusive lower bound of the window

    Entry* e = find_live(map, key, Algorithm::sliding_log, now);
    SlidingLogState empty;
    SlidingLogState* s = e != nullptr ? &std::get<SlidingLogState>(e->state) : &empty;
    // ZCOUNT (after, +inf]: the first mark inside the window, and the units before it.
    auto first = std::upper_bound(live_begin(*s), s->marks.end(), after,
                                  [](std::int64_t v, const Mark& m) { return v < m.ms; });
    std::int64_t before = first == live_begin(*s) ? s->base : std::prev(first)->cum;
    std::int64_t count = total_of(*s) - before;

    Reply r;
    std::int64_t need = 0;
    if (report || count + cost <= limit) {
        r.allowed = true;
        if (e == nullptr) {
            e = &insert(map, key, Algorithm::sliding_log);
            s = &std::get<SlidingLogState>(e->state);
            first = s->marks.begin();
        }
        drop_before(*s, first, before);
        before = s->base;  // everything before the window was just removed
        // A report: what fits under the limit, then debt up to max_debt (never less than is
        // owed already).
        const std::int64_t units =
            report ? std::min(cost, std::max<std::int64_t>(0, limit + p.debt_bound() - count)) : cost;
        if (units > 0) add_entry(*s, units, now, report && count + units > limit);
        e->expire_at = now + window;  // PEXPIRE window
        count += units;
        need = 1;  // reset: when the oldest entry leaves the window
        // in debt (a report): when enough entries have left for one unit to fit
        if (count >= limit) need = count - limit + 1;
    } else {
        need = count + cost - limit;  // reset: when enough entries have left for `cost` to fit
    }

    // The first mark whose running total reaches the need-th unit of the window.
    auto mark = std::lower_bound(live_begin(*s), s->marks.end(), before + need,
                                 [](const Mark& m, std::int64_t v) { return m.cum < v; });
    // Only a cost above the limit (a broken precondition) finds none.
    r.reset_ms = count == 0 ? now : (mark != s->marks.end() ? mark->ms : now) + window;
    r.remaining = std::max<std::int64_t>(0, limit - count);  // the limit may have been lowered
    if (report) r.debt = std::max<std::int64_t>(0, count - limit);
    return r;
}

}  // namespace

Reply SlidingLog::check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now) {
    return log_step(map, key, p, cost, now, false);
}

// No refunds: the log cannot tell which members to take back (the planner refuses a negative
// report on a sliding log; here it logs nothing, as the script does). A report beyond the
// limit is one debt entry of at most max_debt units, as in the script.
Reply SlidingLog::report(Map& map, const Key& key, const Policy& p, std::int64_t cost,
                         std::int64_t now) {
    return log_step(map, key, p, std::max<std::int64_t>(0, cost), now, true);
}

}  // namespace ratelimitd::store::memory::detail
