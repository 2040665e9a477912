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

/// Each one: the script's "report" mode, charging `cost` signed units of `p` on `key` at `now`
/// without asking (the reply always admits): into debt if need be (remaining 0), a negative
/// cost refunds, never above capacity (the sliding log logs no negative cost).
Reply token_bucket_report(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
Reply sliding_log_report(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
Reply fixed_window_report(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
Reply gcra_report(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
Reply sliding_window_report(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);
/// Never reached (the report planner refuses reports on concurrency policies): the state as it
/// is, admitted, charging nothing.
Reply concurrency_report(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);

/// One per policy::Algorithm, in the enum's order (run_report calls entry i for algorithm i).
inline constexpr AlgorithmStep report_steps[] = {token_bucket_report, sliding_log_report, fixed_window_report,
                                                 gcra_report, sliding_window_report, concurrency_report};
static_assert(std::size(report_steps) == policy::algorithm_count,
              "every policy::Algorithm needs its report step here, in the enum's order");

/// The report mode of `p`'s algorithm.
Reply run_report(Map& map, const std::string& key, const Policy& p, std::int64_t cost, std::int64_t now);

/// The deepest GCRA debt read from a stored TAT (a report bounds what it writes by the
/// policy's max_debt; a TAT from before that, or under other numbers, is read up to this):
/// every number stays an exact integer in a Lua double.
inline constexpr std::int64_t deepest_read_debt = std::int64_t{1} << 52;

/// The reply of a token bucket (or GCRA, whose level is capacity - owed) after a report left
/// it at `level`: admitted, the whole tokens left, reset when the next one is usable.
Reply token_report_reply(std::int64_t level, const Policy& p, std::int64_t now);

// The last lines of every script, from {allowed, remaining, reset_ms}.
check::Verdict to_verdict(const Policy& p, const Reply& r, std::int64_t now);

}  // namespace ratelimitd::store::memory::detail
