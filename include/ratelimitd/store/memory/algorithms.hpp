// The five algorithms of lua/*.lua as state transitions of one entry map (no locking here:
// the caller holds the shard's lock). Internal to src/store/memory.
#pragma once

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/store/memory/entry.hpp"

#include <iterator>

namespace ratelimitd::store::memory::detail {

/// Each one: the script of the same name, deciding `cost` units (0: peek) of `p` on `key` at
/// `now` (epoch ms). An admit writes the entry and its expiry; a denial writes nothing.
Reply token_bucket(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
Reply sliding_log(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
Reply fixed_window(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
Reply gcra(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
Reply sliding_window(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
Reply concurrency(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);

/// One per policy::Algorithm, in the enum's order (run_algorithm calls entry i for algorithm i).
using AlgorithmStep = Reply (*)(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
inline constexpr AlgorithmStep algorithm_steps[] = {token_bucket, sliding_log, fixed_window, gcra, sliding_window,
                                               concurrency};
static_assert(std::size(algorithm_steps) == policy::algorithm_count,
              "every policy::Algorithm needs its step here, in the enum's order");

/// The algorithm of `p`.
Reply run_algorithm(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);

// The last lines of every script, from {allowed, remaining, reset_ms}.
check::Verdict to_verdict(const Policy& p, const Reply& r, std::int64_t now);

}  // namespace ratelimitd::store::memory::detail
