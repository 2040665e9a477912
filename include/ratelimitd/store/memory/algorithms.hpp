// The algorithms of lua/*.lua as state transitions of one entry map (no locking here: the
// caller holds the shard's lock), dispatched on the policy's algorithm. Internal to
// src/store/memory.
#pragma once

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/store/memory/entry.hpp"

namespace ratelimitd::store::memory::detail {

/// The check of `p`'s algorithm (Steps::checks).
Reply run_algorithm(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);

/// A single check of a policy that may delay (Policy::queue_units > 0): the check of its
/// algorithm, reserving up to that queue below empty (lua's ";delay:<units>" member). Layered
/// checks never reserve (lua/multi.lua is sent no queue).
Reply run_reserve(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);

/// The report mode of `p`'s algorithm (Steps::reports).
Reply run_report(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);

/// The deepest GCRA debt read from a stored TAT (a report bounds what it writes by the
/// policy's max_debt; a TAT from before that, or under other numbers, is read up to this):
/// every number stays an exact integer in a Lua double.
inline constexpr std::int64_t deepest_read_debt = std::int64_t{1} << 52;

/// The reply of a token bucket (or GCRA, whose level is capacity - owed) after a report left
/// it at `level`: admitted, the whole tokens left, reset when the next one is usable.
Reply token_report_reply(std::int64_t level, const Policy& p, std::int64_t now);

// The last lines of every script, from {allowed, remaining, reset_ms}.
check::Verdict to_verdict(const Policy& p, const Reply& r, std::int64_t now);

// The same, written into `out` (its windows replaced by the one): no verdict built and moved.
void to_verdict_into(const Policy& p, const Reply& r, std::int64_t now, check::Verdict& out);

}  // namespace ratelimitd::store::memory::detail
