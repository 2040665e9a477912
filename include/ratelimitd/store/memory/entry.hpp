// The embedded store's data: one entry per key, holding the state one algorithm keeps in Redis.
// Internal to src/store/memory (not an interface of the module).
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace ratelimitd::store::memory::detail {

using policy::Algorithm;
using policy::Policy;

// Integer rounding with the results of the scripts' math.ceil / math.floor of a double
// quotient: every operand stays below 2^53 (the config loader guarantees it), where the
// double quotient of two integers never rounds across an integer, so these are exact.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {  // b > 0
    return a / b + ((a % b) > 0 ? 1 : 0);
}
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {  // b > 0
    return a / b - ((a % b) < 0 ? 1 : 0);
}

// What each algorithm decides; the reply's seconds are derived from it in one place, as the
// last lines of every script do.
struct Reply {
    bool allowed = false;
    std::int64_t remaining = 0;
    std::int64_t reset_ms = 0;  // absolute, epoch ms
    std::string lease;          // concurrency: the id of the lease an admit took
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

// One held lease of concurrency.lua's sorted set: its expiry (the score) and id (the member).
struct Lease {
    std::int64_t expiry = 0;
    std::string id;
};

// concurrency.lua's sorted set, in its order: by expiry, then id.
struct ConcurrencyState {
    std::vector<Lease> leases;
};

/// One alternative per policy::Algorithm, in the enum's order: alternative i is the state of
/// algorithm i (find_live and insert rely on it).
using AlgorithmState = std::variant<TokenBucketState, SlidingLogState, FixedWindowState, GcraState, SlidingWindowState,
                                    ConcurrencyState>;
static_assert(std::variant_size_v<AlgorithmState> == policy::algorithm_count,
              "every policy::Algorithm needs its state here, in the enum's order");

struct Entry {
    // Redis's PEXPIREAT: the entry is absent once now > expire_at (see expired()).
    std::int64_t expire_at = 0;
    AlgorithmState state;
};

// Redis's keyIsExpired() is `now > when`: during its expiry millisecond a key still exists
// (PTTL 0), so a fixed window still denies then. Same test here, or the stores would differ.
inline bool expired(const Entry& e, std::int64_t now) { return now > e.expire_at; }

using Map = std::unordered_map<std::string, Entry>;

// The lookup the scripts start with: the live entry of `key`, or nullptr when the key is
// absent in Redis terms. An expired entry is erased here, as Redis does on access. An entry
// written by another algorithm (the policy changed algorithm on reload) counts as absent:
// Redis would answer WRONGTYPE until the key expires, which helps nobody.
Entry* find_live(Map& map, const std::string& key, Algorithm algorithm, std::int64_t now);

/// A fresh entry of `key` holding `algorithm`'s empty state (its expiry is the caller's to set).
Entry& insert(Map& map, const std::string& key, Algorithm algorithm);

}  // namespace ratelimitd::store::memory::detail
