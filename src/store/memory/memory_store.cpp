// The embedded store: lua/token_bucket.lua, sliding_log.lua, fixed_window.lua, gcra.lua and
// sliding_window.lua in C++.
#include "ratelimitd/store/memory/memory_store.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace ratelimitd::store::memory {
namespace {

using policy::Algorithm;
using policy::Policy;

// Integer rounding with the results of the scripts' math.ceil / math.floor of a double
// quotient: every operand stays below 2^53 (the config loader guarantees it), where the
// double quotient of two integers never rounds across an integer, so these are exact.
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {  // b > 0
    return a / b + ((a % b) > 0 ? 1 : 0);
}
std::int64_t floor_div(std::int64_t a, std::int64_t b) {  // b > 0
    return a / b - ((a % b) < 0 ? 1 : 0);
}

// What each algorithm decides; the reply's seconds are derived from it in one place, as the
// last lines of every script do.
struct Reply {
    bool allowed = false;
    std::int64_t remaining = 0;
    std::int64_t reset_ms = 0;  // absolute, epoch ms
};

// token_bucket.lua's hash {l, t, w, b}: level in units of 1/window_ms token, ms of the last
// admit, the window_ms the level is counted in, the burst it was filled to.
struct TokenBucketState {
    std::int64_t level = 0;
    std::int64_t t = 0;
    std::int64_t window = 0;
    std::int64_t burst = 0;
};

// One distinct admit time of the sliding log, standing for `cum - previous cum` units that
// the script stores as that many sorted-set members with the same score. `cum` is a running
// total so counting a score range and finding the n-th unit are binary searches.
struct Mark {
    std::int64_t ms = 0;
    std::int64_t cum = 0;
};

// sliding_log.lua's sorted set: marks_[head_..] sorted by ms; marks before head_ have been
// removed (ZREMRANGEBYSCORE) and wait for compaction, so removal from the front is O(1)
// amortised. base_ is the running total before the first live mark.
struct SlidingLogState {
    std::vector<Mark> marks;
    std::size_t head = 0;
    std::int64_t base = 0;
};

// fixed_window.lua's counter.
struct FixedWindowState {
    std::int64_t count = 0;
};

// gcra.lua's string "<ms>:<f>:<limit>:<window>": the TAT is ms + f / limit, written under
// those numbers.
struct GcraState {
    std::int64_t ms = 0;
    std::int64_t f = 0;
    std::int64_t limit = 0;
    std::int64_t window = 0;
};

// sliding_window.lua's hash {s, c, p, w}: when the current window opened, its count, the
// previous window's count, the window_ms they were counted in.
struct SlidingWindowState {
    std::int64_t start = 0;
    std::int64_t cur = 0;
    std::int64_t prev = 0;
    std::int64_t window = 0;
};

struct Entry {
    // Redis's PEXPIREAT: the entry is absent once now > expire_at (see expired()).
    std::int64_t expire_at = 0;
    std::variant<TokenBucketState, SlidingLogState, FixedWindowState, GcraState, SlidingWindowState> state;
};

// Redis's keyIsExpired() is `now > when`: during its expiry millisecond a key still exists
// (PTTL 0), so a fixed window still denies then. Same test here, or the stores would differ.
bool expired(const Entry& e, std::int64_t now) { return now > e.expire_at; }

// Index of the variant alternative that holds an algorithm's state.
std::size_t state_index(Algorithm a) {
    switch (a) {
        case Algorithm::token_bucket: return 0;
        case Algorithm::sliding_log: return 1;
        case Algorithm::fixed_window: return 2;
        case Algorithm::gcra: return 3;
        case Algorithm::sliding_window: return 4;
    }
    return 0;
}

using Map = std::unordered_map<std::string, Entry>;

// The lookup the scripts start with: the live entry of `key`, or nullptr when the key is
// absent in Redis terms. An expired entry is erased here, as Redis does on access. An entry
// written by another algorithm (the policy changed algorithm on reload) counts as absent:
// Redis would answer WRONGTYPE until the key expires, which helps nobody.
Entry* find_live(Map& map, const std::string& key, Algorithm algorithm, std::int64_t now) {
    auto it = map.find(key);
    if (it == map.end()) return nullptr;
    if (expired(it->second, now) || it->second.state.index() != state_index(algorithm)) {
        map.erase(it);
        return nullptr;
    }
    return &it->second;
}

Entry& insert(Map& map, const std::string& key, Algorithm algorithm) {
    Entry& e = map[key];
    switch (algorithm) {
        case Algorithm::token_bucket: e.state.emplace<TokenBucketState>(); break;
        case Algorithm::sliding_log: e.state.emplace<SlidingLogState>(); break;
        case Algorithm::fixed_window: e.state.emplace<FixedWindowState>(); break;
        case Algorithm::gcra: e.state.emplace<GcraState>(); break;
        case Algorithm::sliding_window: e.state.emplace<SlidingWindowState>(); break;
    }
    return e;
}

// A stored bucket's level in policy `p`'s units; a bucket filled under other numbers (a
// reload) keeps its used tokens used (in the new units, rounded up), out of the new burst.
std::int64_t bucket_level(const TokenBucketState& s, const Policy& p) {
    const std::int64_t window = p.window.count();
    if (s.window == window && s.burst == p.burst) return s.level;
    const __int128 used_old = static_cast<__int128>(s.burst) * s.window - s.level;
    const __int128 used = (used_old * window + s.window - 1) / s.window;
    return static_cast<std::int64_t>(std::max<__int128>(0, static_cast<__int128>(p.burst) * window - used));
}

// lua/token_bucket.lua.
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

// lua/sliding_log.lua.
Reply sliding_log(Map& map, const std::string& key, const Policy& p, std::int64_t cost,
                  std::int64_t now) {
    const std::int64_t limit = p.limit;
    const std::int64_t window = p.window.count();
    const std::int64_t after = now - window;  // exclusive lower bound of the window

    Entry* e = find_live(map, key, Algorithm::sliding_log, now);
    SlidingLogState empty;
    SlidingLogState* s = e != nullptr ? &std::get<SlidingLogState>(e->state) : &empty;
    auto live_begin = s->marks.begin() + static_cast<std::ptrdiff_t>(s->head);
    // ZCOUNT (after, +inf]: the first mark inside the window, and the units before it.
    auto first = std::upper_bound(live_begin, s->marks.end(), after,
                                  [](std::int64_t v, const Mark& m) { return v < m.ms; });
    std::int64_t before = first == live_begin ? s->base : std::prev(first)->cum;
    const std::int64_t total = s->marks.size() > s->head ? s->marks.back().cum : s->base;
    std::int64_t count = total - before;

    Reply r;
    std::int64_t nth = 0;
    if (count + cost <= limit) {
        r.allowed = true;
        if (e == nullptr) {
            e = &insert(map, key, Algorithm::sliding_log);
            s = &std::get<SlidingLogState>(e->state);
            first = s->marks.begin();
        }
        // ZREMRANGEBYSCORE -inf..after: exactly the marks before `first`.
        s->head = static_cast<std::size_t>(first - s->marks.begin());
        s->base = before;
        // Compact once half the vector is dead, so removal stays O(1) amortised.
        if (s->head > 0 && s->head * 2 >= s->marks.size()) {
            s->marks.erase(s->marks.begin(), s->marks.begin() + static_cast<std::ptrdiff_t>(s->head));
            s->head = 0;
            if (s->marks.capacity() > 2 * s->marks.size() + 8) s->marks.shrink_to_fit();
        }
        // ZADD `cost` members scored now.
        if (s->marks.size() > s->head && s->marks.back().ms == now) {
            s->marks.back().cum += cost;
        } else if (s->marks.size() == s->head || s->marks.back().ms < now) {
            const std::int64_t last = s->marks.size() > s->head ? s->marks.back().cum : s->base;
            s->marks.push_back(Mark{now, last + cost});
        } else {
            // The clock stepped back below the newest score: insert in score order and shift
            // the running totals after it. Rare, so O(n) is fine.
            auto pos = std::lower_bound(s->marks.begin() + static_cast<std::ptrdiff_t>(s->head),
                                        s->marks.end(), now,
                                        [](const Mark& m, std::int64_t v) { return m.ms < v; });
            if (pos != s->marks.end() && pos->ms == now) {
                for (auto it = pos; it != s->marks.end(); ++it) it->cum += cost;
            } else {
                const std::int64_t prev_cum =
                    pos == s->marks.begin() + static_cast<std::ptrdiff_t>(s->head) ? s->base
                                                                                   : std::prev(pos)->cum;
                pos = s->marks.insert(pos, Mark{now, prev_cum + cost});
                for (auto it = std::next(pos); it != s->marks.end(); ++it) it->cum += cost;
            }
        }
        e->expire_at = now + window;  // PEXPIRE window
        count += cost;
        before = s->base;  // everything before the window was just removed
        nth = 1;           // reset: when the oldest entry leaves the window
    } else {
        nth = count + cost - limit;  // reset: when enough entries have left for `cost` to fit
    }

    // ZRANGEBYSCORE (after, +inf] LIMIT nth-1 1: the first mark whose running total reaches
    // the nth unit of the window.
    live_begin = s->marks.begin() + static_cast<std::ptrdiff_t>(s->head);
    auto mark = std::lower_bound(live_begin, s->marks.end(), before + nth,
                                 [](const Mark& m, std::int64_t v) { return m.cum < v; });
    // Only a cost above the limit (a broken precondition; the script would fail) finds none.
    r.reset_ms = (mark != s->marks.end() ? mark->ms : now) + window;
    r.remaining = std::max<std::int64_t>(0, limit - count);  // the limit may have been lowered
    return r;
}

// lua/fixed_window.lua.
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

// gcra.lua's debt (TAT - now, in units of 1/limit ms, at most the capacity) of a stored
// TAT; a TAT written under other numbers (a reload) owes the same units, rounded up.
std::int64_t gcra_debt(const GcraState& s, const Policy& p, std::int64_t now) {
    const std::int64_t capacity = p.burst * p.window.count();
    const std::int64_t ahead = s.ms - now;
    if (ahead < 0) return 0;
    const __int128 owed = static_cast<__int128>(ahead) * s.limit + s.f;  // in units of 1/s.limit ms
    if (s.limit == p.limit && s.window == p.window.count()) {
        return static_cast<std::int64_t>(std::min<__int128>(capacity, owed));
    }
    const __int128 converted = (owed * p.window.count() + s.window - 1) / s.window;
    return static_cast<std::int64_t>(std::min<__int128>(capacity, converted));
}

// lua/gcra.lua: time in units of 1/limit ms, so the emission interval is window units and
// `debt` (TAT - now) is token_bucket's capacity - level.
Reply gcra(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now) {
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
    Reply r;
    if (level >= need) {
        r.allowed = true;
        level -= need;
        const std::int64_t owed = debt + need;
        if (e == nullptr) e = &insert(map, key, Algorithm::gcra);
        e->state = GcraState{now + owed / limit, owed % limit, limit, window};
        e->expire_at = now + ceil_div(owed, limit);  // SET ... PX: until the TAT is past
        // reset: when the next whole unit is back
        const std::int64_t tokens = floor_div(level, window);
        r.reset_ms = tokens >= p.burst ? now : now + ceil_div((tokens + 1) * window - level, limit);
    } else {
        // reset: when `cost` units are back; a denied check writes nothing
        r.reset_ms = now + ceil_div(need - level, limit);
    }
    r.remaining = floor_div(level, window);
    return r;
}

// lua/sliding_window.lua: counts weighted by milliseconds of the window, in integers.
Reply sliding_window(Map& map, const std::string& key, const Policy& p, std::int64_t cost,
                     std::int64_t now) {
    const std::int64_t limit = p.limit;
    const std::int64_t window = p.window.count();

    Entry* e = find_live(map, key, Algorithm::sliding_window, now);
    std::int64_t start = now;
    std::int64_t cur = 0;
    std::int64_t prev = 0;
    if (e != nullptr) {
        const auto& s = std::get<SlidingWindowState>(e->state);
        const std::int64_t opened = std::min(s.start, now);  // clock stepped back: stay in the window
        const std::int64_t passed = (now - opened) / s.window;
        if (s.window != window) {
            // The window changed on reload: what still weighs in the old sliding window counts
            // as admitted now, in a window of the new length that opens now.
            if (passed == 0) cur = s.cur + s.prev;
            if (passed == 1) cur = s.cur;
        } else if (passed == 0) {
            start = opened;
            cur = s.cur;
            prev = s.prev;
        } else if (passed == 1) {
            start = opened + window;
            prev = s.cur;
        }  // two windows or more: a new one opens now
    }

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

// 64 shards keep two threads on different keys off each other's lock (see
// bench/memory_store_bytes.md); each shard sits on its own cache lines.
constexpr std::size_t shard_count = 64;
// Buckets of its shard that each apply() inspects for expired entries: enough to visit the
// whole map once per (buckets / 2) checks of the shard, cheap enough not to show.
constexpr std::size_t sweep_buckets_per_check = 2;

// Entries a full shard looks at to choose what to drop: a sample, as Redis's eviction does,
// so a new key costs a bounded number of steps however large the shard is.
constexpr std::size_t eviction_sample = 8;
// Buckets scanned at most for that sample (a map has about one bucket per entry).
constexpr std::size_t eviction_scan_buckets = 32;

struct alignas(64) Shard {
    mutable std::mutex mutex;
    Map map;
    std::size_t sweep_cursor = 0;  // next bucket of the incremental sweep (and eviction sample)
    std::size_t max_keys = std::numeric_limits<std::size_t>::max();  // its share of the cap
};

// Drops the expired entries of bucket `bucket`. Keys are copied before erasing because
// erase(key) must not be handed a reference into the node it destroys.
std::size_t sweep_bucket(Map& map, std::size_t bucket, std::int64_t now) {
    std::array<std::string, 4> doomed;
    std::size_t n = 0;
    std::size_t dropped = 0;
    for (auto it = map.begin(bucket); it != map.end(bucket); ++it) {
        if (expired(it->second, now)) {
            doomed[n++] = it->first;
            if (n == doomed.size()) break;  // the rest waits for the next pass
        }
    }
    for (std::size_t i = 0; i < n; ++i) dropped += map.erase(doomed[i]);
    return dropped;
}

// Brings `shard` back to its max_keys after a write. Expired entries go first: those in a
// sample of buckets at the sweep cursor (so successive samples move over the whole map) are
// dropped. With none, the sampled entry nearest its expiry is evicted: the one whose state
// was soonest to go anyway, so forgetting it gives back the least quota (a token bucket
// nearest to full, a window nearest to its end). `keep(key)` marks the keys just written,
// which are never chosen. Returns the number of live entries evicted.
template <class Keep>
std::size_t trim(Shard& shard, std::int64_t now, const Keep& keep) {
    Map& map = shard.map;
    std::size_t evicted = 0;
    while (map.size() > shard.max_keys) {
        // Pointers to keys, erased through find(): erase(key) must not be handed a reference
        // into the node it destroys, and erasing one node leaves the others' keys in place.
        std::array<const std::string*, eviction_sample> expired_keys{};
        std::size_t n_expired = 0;
        const std::string* victim = nullptr;
        std::int64_t victim_expiry = 0;
        std::size_t seen = 0;
        const std::size_t buckets = map.bucket_count();
        for (std::size_t b = 0; b < std::min(buckets, eviction_scan_buckets) && seen < eviction_sample; ++b) {
            if (shard.sweep_cursor >= buckets) shard.sweep_cursor = 0;
            const std::size_t bucket = shard.sweep_cursor++;
            for (auto it = map.begin(bucket); it != map.end(bucket) && seen < eviction_sample; ++it, ++seen) {
                if (keep(it->first)) continue;
                if (expired(it->second, now)) {
                    expired_keys[n_expired++] = &it->first;
                } else if (victim == nullptr || it->second.expire_at < victim_expiry) {
                    victim = &it->first;
                    victim_expiry = it->second.expire_at;
                }
            }
        }
        if (n_expired > 0) {
            for (std::size_t i = 0; i < n_expired; ++i) map.erase(map.find(*expired_keys[i]));
            continue;
        }
        if (victim == nullptr) {
            // The sampled buckets held only kept keys: any other key will do.
            for (const auto& kv : map) {
                if (!keep(kv.first)) {
                    victim = &kv.first;
                    break;
                }
            }
            if (victim == nullptr) break;  // nothing but the keys just written
        }
        map.erase(map.find(*victim));
        ++evicted;
    }
    return evicted;
}

}  // namespace

struct MemoryStore::Impl {
    Impl(const Clock& c, std::size_t max_keys) : clock(c) {
        if (max_keys == 0) return;
        // Shares that add up to max_keys exactly, at least one key per shard.
        max_keys = std::max(max_keys, shard_count);
        for (std::size_t i = 0; i < shard_count; ++i) {
            shards[i].max_keys = max_keys / shard_count + (i < max_keys % shard_count ? 1 : 0);
        }
    }

    // The map buckets by the low bits of the same hash, so the shard takes the high ones:
    // keys of one shard then still spread over all of its buckets.
    Shard& shard_of(const std::string& key) {
        const std::size_t h = std::hash<std::string>{}(key);
        return shards[(h >> (sizeof(std::size_t) * 8 - 16)) % shard_count];
    }

    const Clock& clock;
    std::array<Shard, shard_count> shards;
    std::atomic<std::uint64_t> evictions{0};
};

MemoryStore::MemoryStore(const Clock& clock, std::size_t max_keys)
    : impl_(std::make_unique<Impl>(clock, max_keys)) {}

MemoryStore::~MemoryStore() = default;

namespace {

// The last lines of every script, from {allowed, remaining, reset_ms}.
check::Verdict to_verdict(const Policy& p, const Reply& r, std::int64_t now) {
    check::WindowState w;
    w.policy = p.name;
    w.allowed = r.allowed;
    w.limit = p.limit;
    w.window_s = std::max<std::int64_t>(1, ceil_div(p.window.count(), 1000));
    w.remaining = r.remaining;
    w.reset_epoch_s = ceil_div(r.reset_ms, 1000);
    w.reset_after_s = ceil_div(r.reset_ms - now, 1000);
    w.reset_after_ms = r.reset_ms - now;
    w.retry_after_s = r.allowed ? 0 : std::max<std::int64_t>(1, w.reset_after_s);
    check::Verdict v;
    v.allowed = r.allowed;
    v.windows.push_back(std::move(w));
    return v;
}

Reply run_algorithm(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now) {
    switch (p.algorithm) {
        case Algorithm::token_bucket: return token_bucket(map, key, p, cost, now);
        case Algorithm::sliding_log: return sliding_log(map, key, p, cost, now);
        case Algorithm::fixed_window: return fixed_window(map, key, p, cost, now);
        case Algorithm::gcra: return gcra(map, key, p, cost, now);
        case Algorithm::sliding_window: return sliding_window(map, key, p, cost, now);
    }
    return Reply{};
}

// The scripts' peek mode (cost 0, nothing written), run on a copy of the one entry so the
// live state cannot change; a full quota resets "now", as in the scripts.
Reply peek_reply(const Map& map, const std::string& key, const Policy& p, std::int64_t now) {
    Map scratch;
    if (auto it = map.find(key); it != map.end()) scratch.emplace(key, it->second);
    Reply r = run_algorithm(scratch, key, p, 0, now);
    if (r.remaining >= p.max_cost()) r.reset_ms = now;
    return r;
}

}  // namespace

// multi.lua in C++: peek every limit, then charge all or only run the misfits (whose denied
// path writes nothing). A peek's remaining >= cost is exactly each algorithm's admit test.
check::Verdict MemoryStore::decide_all(const std::vector<LimitCheck>& checks) {
    // Lock every shard involved, in address (= index) order, so two layered checks that
    // share shards cannot deadlock; a shard holding two of the keys is locked once.
    std::vector<Shard*> shards;
    shards.reserve(checks.size());
    for (const auto& c : checks) shards.push_back(&impl_->shard_of(c.key));
    std::vector<Shard*> order = shards;
    std::sort(order.begin(), order.end(), std::less<Shard*>{});
    order.erase(std::unique(order.begin(), order.end()), order.end());
    std::vector<std::unique_lock<std::mutex>> locks;
    locks.reserve(order.size());
    for (Shard* s : order) locks.emplace_back(s->mutex);

    const std::int64_t now = impl_->clock.now_ms();
    std::vector<Reply> replies(checks.size());
    std::vector<bool> fits(checks.size());
    bool all_fit = true;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        replies[i] = peek_reply(shards[i]->map, checks[i].key, *checks[i].policy, now);
        fits[i] = replies[i].remaining >= static_cast<std::int64_t>(checks[i].cost);
        all_fit = all_fit && fits[i];
    }
    for (std::size_t i = 0; i < checks.size(); ++i) {
        if (all_fit || !fits[i]) {
            replies[i] = run_algorithm(shards[i]->map, checks[i].key, *checks[i].policy,
                                       static_cast<std::int64_t>(checks[i].cost), now);
        }
    }
    for (Shard* s : order) {
        if (s->map.size() <= s->max_keys) continue;
        const auto written = [&checks](const std::string& k) {
            return std::any_of(checks.begin(), checks.end(), [&k](const LimitCheck& c) { return c.key == k; });
        };
        impl_->evictions.fetch_add(trim(*s, now, written), std::memory_order_relaxed);
    }
    locks.clear();

    check::Verdict v;
    v.allowed = true;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        auto one = to_verdict(*checks[i].policy, replies[i], now);
        v.allowed = v.allowed && one.allowed;
        v.windows.push_back(std::move(one.windows.front()));
    }
    return v;
}

boost::asio::awaitable<result<check::Verdict>> MemoryStore::apply_all(std::vector<LimitCheck> checks) {
    co_return decide_all(checks);
}

check::Verdict MemoryStore::decide(const policy::Policy& p, const std::string& key,
                                   std::uint32_t cost) {
    Shard& shard = impl_->shard_of(key);
    Reply r;
    std::int64_t now = 0;
    {
        std::lock_guard lock(shard.mutex);
        // Read the clock under the lock, as Redis reads TIME inside the script: checks of one
        // key then see non-decreasing times in the order they are decided.
        now = impl_->clock.now_ms();
        r = run_algorithm(shard.map, key, p, static_cast<std::int64_t>(cost), now);
        if (shard.map.size() > shard.max_keys) {
            const auto written = [&key](const std::string& k) { return k == key; };
            impl_->evictions.fetch_add(trim(shard, now, written), std::memory_order_relaxed);
        }
        for (std::size_t i = 0; i < sweep_buckets_per_check; ++i) {
            if (shard.sweep_cursor >= shard.map.bucket_count()) shard.sweep_cursor = 0;
            sweep_bucket(shard.map, shard.sweep_cursor++, now);
        }
    }
    return to_verdict(p, r, now);
}

// The scripts' "peek" mode: a check of cost 0 that writes nothing. It runs on a copy of the
// one entry, so the live state cannot change; a full quota resets "now", as in the scripts.
check::Verdict MemoryStore::inspect(const policy::Policy& p, const std::string& key) {
    Shard& shard = impl_->shard_of(key);
    Map scratch;
    std::int64_t now = 0;
    {
        std::lock_guard lock(shard.mutex);
        now = impl_->clock.now_ms();
        if (auto it = shard.map.find(key); it != shard.map.end()) scratch.emplace(key, it->second);
    }
    Reply r = run_algorithm(scratch, key, p, 0, now);
    if (r.remaining >= p.max_cost()) r.reset_ms = now;
    auto v = to_verdict(p, r, now);
    v.allowed = v.windows.front().allowed = r.remaining >= 1;
    v.windows.front().retry_after_s = 0;
    return v;
}

bool MemoryStore::forget(const std::string& key) {
    Shard& shard = impl_->shard_of(key);
    std::lock_guard lock(shard.mutex);
    auto it = shard.map.find(key);
    if (it == shard.map.end()) return false;
    const bool live = !expired(it->second, impl_->clock.now_ms());
    shard.map.erase(it);
    return live;
}

boost::asio::awaitable<result<check::Verdict>> MemoryStore::peek(const policy::Policy& p, std::string key) {
    co_return inspect(p, key);
}

boost::asio::awaitable<result<bool>> MemoryStore::reset(std::string key) { co_return forget(key); }

boost::asio::awaitable<result<check::Verdict>> MemoryStore::apply(const policy::Policy& p,
                                                                  std::string key,
                                                                  std::uint32_t cost) {
    // Decided synchronously: holding a shard lock for microseconds beats a thread hop.
    co_return decide(p, key, cost);
}

boost::asio::awaitable<bool> MemoryStore::ready() { co_return true; }

std::string MemoryStore::describe() const { return "embedded (per-instance limits)"; }

std::size_t MemoryStore::sweep_expired() {
    std::size_t dropped = 0;
    for (Shard& shard : impl_->shards) {
        std::lock_guard lock(shard.mutex);
        const std::int64_t now = impl_->clock.now_ms();
        dropped += std::erase_if(shard.map, [now](const auto& kv) { return expired(kv.second, now); });
        // Give back the bucket array after a burst of tenants has gone.
        if (shard.map.bucket_count() > 64 && shard.map.size() * 4 < shard.map.bucket_count()) {
            shard.map.rehash(0);
            shard.sweep_cursor = 0;
        }
    }
    return dropped;
}

std::uint64_t MemoryStore::evictions() const { return impl_->evictions.load(std::memory_order_relaxed); }

std::size_t MemoryStore::key_count() const {
    std::size_t n = 0;
    for (const Shard& shard : impl_->shards) {
        std::lock_guard lock(shard.mutex);
        n += shard.map.size();
    }
    return n;
}

}  // namespace ratelimitd::store::memory
