// The numbers of one window of a policy (limit, window, burst, max_debt), each checked against
// what its algorithm's scripts count exactly (algorithm_table: burst, ms_scaled, member).
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace ratelimitd::policy {

inline constexpr std::int64_t max_limit = 1'000'000'000;
/// A script keeping one sorted-set member per unit (ScriptMember::per_unit) or per lease holds
/// at most this many.
inline constexpr std::int64_t max_members = 100'000;
/// Doubles hold integers exactly up to here: the bound of every count scaled by window ms.
inline constexpr std::int64_t max_exact_double = std::int64_t{1} << 53;
inline constexpr std::chrono::milliseconds max_window = std::chrono::hours(24 * 365);
/// The deepest report debt, in windows of the limit: a key in debt lives at most
/// (1 + max_debt / limit) windows, so this bounds how long one report can lock a tenant out.
inline constexpr std::int64_t max_debt_windows = 100;

/// limit, window (calendar-aligned when p.calendar), burst and max_debt of `body` into `p`
/// (whose algorithm and alignment are set); refuses what the algorithm does not take or
/// could not count exactly. `in` names the file in every message.
void read_window(const SchemaChecks& in, const ConfigTree& body, const std::string& path, Policy& p);

/// Refuses a `max_debt` beyond max_debt_windows x limit, or one the scripts could not count
/// exactly; `path` is the policy's or the window's.
void check_max_debt(const SchemaChecks& in, const Policy& p, const std::string& path);

}  // namespace ratelimitd::policy
