// lua/token_bucket.lua in C++.
#include "ratelimitd/store/memory/algorithms.hpp"
#include "ratelimitd/store/memory/entry.hpp"

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

// The instant a decision on the bucket is made at: never before the bucket's own last update.
// Two threads read the clock before they take the key in turn, so the later decision may carry
// the earlier reading; taken as is, it refilled nothing (no time went back) yet dated the delay
// and the stored level from before the update it follows: the next check then refilled the
// same milliseconds again, and reservations fell less than one token's time apart (11 releases
// within 999 ms at 10/s, seen in the sanitized suite).
std::int64_t decision_time(const Entry* e, std::int64_t now) {
    return e == nullptr ? now : std::max(now, std::get<TokenBucketState>(e->state).t);
}

// The level of the bucket at `now`, a decision_time (capacity when absent).
std::int64_t level_now(const Entry* e, const Policy& p, std::int64_t now) {
    const std::int64_t capacity = p.burst * p.window.count();
    if (e == nullptr) return capacity;
    const auto& s = std::get<TokenBucketState>(e->state);
    const std::int64_t elapsed = now - s.t;  // never negative: a stepped-back clock refills nothing
    const std::int64_t stored = bucket_level(s, p);
    // min(capacity, l + elapsed * limit) without overflowing when elapsed is huge (a debt is a
    // negative level, refilled the same way).
    const std::int64_t missing = capacity - stored;
    if (missing <= 0 || elapsed >= ceil_div(missing, p.limit)) return capacity;
    return std::min(stored + elapsed * p.limit, capacity);
}

}  // namespace

Reply token_report_reply(std::int64_t level, const Policy& p, std::int64_t now) {
    const std::int64_t window = p.window.count();
    Reply r;
    r.allowed = true;
    // reset: when the next whole token is usable (after the debt, if any)
    const std::int64_t tokens = std::max<std::int64_t>(0, floor_div(level, window));
    r.reset_ms = tokens >= p.burst ? now : now + ceil_div((tokens + 1) * window - level, p.limit);
    r.remaining = tokens;
    r.debt = std::max<std::int64_t>(0, floor_div(-level, window));
    return r;
}

// token_bucket.lua's report mode: the level drops by `cost` tokens, below zero if need be but
// never below -max_debt tokens (a negative cost: rises, to a full bucket at most).
Reply TokenBucket::report(Map& map, const Key& key, const Policy& p, std::int64_t cost,
                          std::int64_t now) {
    const std::int64_t window = p.window.count();
    const std::int64_t capacity = p.burst * window;
    Entry* e = find_live(map, key, Algorithm::token_bucket, now);
    now = decision_time(e, now);
    const std::int64_t level = std::clamp<std::int64_t>(level_now(e, p, now) - cost * window, -p.debt_bound() * window, capacity);
    if (level >= capacity) {
        if (e != nullptr) map.erase(key);  // full again: the missing key means exactly that
    } else {
        if (e == nullptr) e = &insert(map, key, Algorithm::token_bucket);
        e->state = TokenBucketState{level, now, window, p.burst};
        e->expire_at = now + ceil_div(capacity - level, p.limit);
    }
    return token_report_reply(level, p, now);
}

Reply TokenBucket::check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now) {
    return reserve(map, key, p, cost, now, 0);
}

Reply TokenBucket::reserve(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now,
                           std::int64_t queue) {
    const std::int64_t limit = p.limit;
    const std::int64_t window = p.window.count();
    const std::int64_t capacity = p.burst * window;
    const std::int64_t need = cost * window;

    Entry* e = find_live(map, key, Algorithm::token_bucket, now);
    now = decision_time(e, now);
    std::int64_t level = level_now(e, p, now);
    const auto charge = [&] {
        level -= need;
        if (e == nullptr) e = &insert(map, key, Algorithm::token_bucket);
        e->state = TokenBucketState{level, now, window, p.burst};
        e->expire_at = now + ceil_div(capacity - level, limit);
    };

    Reply r;
    if (level >= need) {
        r.allowed = true;
        charge();
        // reset: when the next whole token is back
        const std::int64_t tokens = floor_div(level, window);
        r.reset_ms = now + ceil_div((tokens + 1) * window - level, limit);
    } else if (queue > 0 && need - level <= queue) {
        // reserved: due when the refill has covered it, charged now so later checks queue after it
        r.allowed = true;
        r.delay_ms = ceil_div(need - level, limit);
        charge();
        // reset: when the next whole token is usable, after every reservation
        r.reset_ms = now + ceil_div(window - level, limit);
    } else {
        // reset: when `cost` tokens (less the queue it may reserve) are back; a denied check
        // writes nothing
        r.reset_ms = now + ceil_div(need - level - queue, limit);
    }
    r.remaining = std::max<std::int64_t>(0, floor_div(level, window));
    return r;
}

}  // namespace ratelimitd::store::memory::detail
