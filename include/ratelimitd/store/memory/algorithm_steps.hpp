// The algorithms of the embedded store, each the state its script keeps in Redis and the two
// modes of that script (src/store/memory/NAME.cpp). Steps lists them: the entries' state
// variant and the check and report tables are derived from it. Internal to src/store/memory.
#pragma once

#include "ratelimitd/store/memory/step_list.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ratelimitd::store::memory::detail {

// Each step below: `check` is the script of the same name deciding `cost` units (0: peek);
// an admit writes the entry and its expiry, a denial writes nothing. `report` is the
// script's "report" mode, charging `cost` signed units without asking (the reply always
// admits): into debt if need be (remaining 0), a negative cost refunds, never above capacity.

// token_bucket.lua's string "tb:<l>:<t>:<w>:<b>" (or the hash {l, t, w, b} of earlier
// versions): level in units of 1/window_ms token, ms of the last admit, the window_ms the
// level is counted in, the burst it was filled to.
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
// amortised. base_ is the running total before the first live mark. last_is_debt: the
// newest mark is the script's debt entry (a report's units past the limit), which the next
// such report joins.
struct SlidingLogState {
    std::vector<Mark> marks;
    std::size_t head = 0;
    std::int64_t base = 0;
    bool last_is_debt = false;
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

// erl_fixed_window.lua's counter (envoyproxy/ratelimit's).
struct ErlFixedWindowState {
    std::int64_t count = 0;
};

// One held lease of concurrency.lua's sorted set: its expiry (the score) and id (the member).
struct Lease {
    std::int64_t expiry = 0;
    std::string id;
};

// concurrency.lua's sorted set, in its order: by expiry, then id.
struct ConcurrencyState {
    std::vector<Lease> leases;
};

struct TokenBucket {
    static constexpr Algorithm algorithm = Algorithm::token_bucket;
    using State = TokenBucketState;
    static Reply check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
    static Reply report(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
    /// check() that may go `queue` units below empty: admitted with a delay (the scripts'
    /// ";delay:<queue>" member); check() is reserve() with no queue.
    static Reply reserve(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now,
                         std::int64_t queue);
};

struct SlidingLog {
    static constexpr Algorithm algorithm = Algorithm::sliding_log;
    using State = SlidingLogState;
    static Reply check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
    /// The log logs no negative cost (the report planner refuses one).
    static Reply report(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
};

struct FixedWindow {
    static constexpr Algorithm algorithm = Algorithm::fixed_window;
    using State = FixedWindowState;
    static Reply check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
    static Reply report(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
};

struct Gcra {
    static constexpr Algorithm algorithm = Algorithm::gcra;
    using State = GcraState;
    static Reply check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
    static Reply report(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
    /// check() that may go `queue` units below empty: admitted with a delay (the scripts'
    /// ";delay:<queue>" member); check() is reserve() with no queue.
    static Reply reserve(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now,
                         std::int64_t queue);
};

struct SlidingWindow {
    static constexpr Algorithm algorithm = Algorithm::sliding_window;
    using State = SlidingWindowState;
    static Reply check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
    static Reply report(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
};

struct Concurrency {
    static constexpr Algorithm algorithm = Algorithm::concurrency;
    using State = ConcurrencyState;
    static Reply check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
    /// Never reached (the report planner refuses reports on algorithms holding leases): the
    /// state as it is, admitted, charging nothing.
    static Reply report(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
};

struct ErlFixedWindow {
    static constexpr Algorithm algorithm = Algorithm::erl_fixed_window;
    using State = ErlFixedWindowState;
    /// Charges `cost` whatever the count (0: creates the counter, as INCRBY 0 does); admits
    /// while the count after it is within the limit; `remaining` may be negative.
    static Reply check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
    /// The same charge, always admitted.
    static Reply report(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);
};

/// Every algorithm's step, in the enum's order.
using Steps = StepList<TokenBucket, SlidingLog, FixedWindow, Gcra, SlidingWindow, Concurrency, ErlFixedWindow>;
static_assert(Steps::size == policy::algorithm_count && Steps::in_enum_order(),
              "every policy::Algorithm needs its step in Steps, in the enum's order");

}  // namespace ratelimitd::store::memory::detail
