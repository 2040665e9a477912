// What the step of every algorithm works with: the scripts' integer rounding, the reply, and
// the map of entries it reads and writes (entry.hpp). Internal to src/store/memory.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>

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
    std::int64_t debt = 0;      // a report's: the units owed past the limit after it (the scripts' 2nd value)
};

struct Entry;  // entry.hpp: its state is one of the steps' (algorithm_steps.hpp)
using Map = std::unordered_map<std::string, Entry>;

/// One mode of one algorithm: the script deciding `cost` units (0: peek) of `p` on `key` at
/// `now` (epoch ms), or its report mode charging `cost` signed units.
using AlgorithmStep = Reply (*)(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);

}  // namespace ratelimitd::store::memory::detail
