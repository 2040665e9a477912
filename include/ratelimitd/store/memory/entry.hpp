// The embedded store's data: one entry per key, holding the state one algorithm keeps in Redis.
// Internal to src/store/memory (not an interface of the module).
#pragma once

#include "ratelimitd/store/memory/algorithm_steps.hpp"

#include <cstdint>
#include <string>
#include <variant>

namespace ratelimitd::store::memory::detail {

/// The state of every algorithm of algorithm_steps.hpp: alternative i is algorithm i's
/// (find_live and insert rely on it).
using AlgorithmState = Steps::State;

struct Entry {
    // Redis's PEXPIREAT: the entry is absent once now > expire_at (see expired()).
    std::int64_t expire_at = 0;
    AlgorithmState state;
};

// Redis's keyIsExpired() is `now > when`: during its expiry millisecond a key still exists
// (PTTL 0), so a fixed window still denies then. Same test here, or the stores would differ.
inline bool expired(const Entry& e, std::int64_t now) { return now > e.expire_at; }

// The lookup the scripts start with: the live entry of `key`, or nullptr when the key is
// absent in Redis terms. An entry written by another algorithm (the policy changed algorithm
// on reload) counts as absent: Redis would answer WRONGTYPE until the key expires, which helps
// nobody. Such an entry, or an expired one, stays where it is, invisible: the next admit
// (insert) resets it in place, or the sweep drops it (Redis too drops an expired key on
// access or from its expiry cycle; no answer can tell when).
Entry* find_live(Map& map, const Key& key, Algorithm algorithm, std::int64_t now);

/// A fresh entry of `key` holding `algorithm`'s empty state (its expiry is the caller's to set):
/// an invisible entry of the key (see find_live) is reset in place, else one is added.
Entry& insert(Map& map, const Key& key, Algorithm algorithm);

}  // namespace ratelimitd::store::memory::detail
