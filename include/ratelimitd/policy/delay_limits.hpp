// `max_delay:` and `delay:` of a policy: how far past its burst a check is delayed instead of
// denied (docs/policies.md "Delaying").
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <chrono>
#include <string>

namespace ratelimitd::policy {

/// The largest `max_held`: more held answers than one process may have connections.
inline constexpr std::int64_t largest_max_held = 1'000'000;

/// The longest `max_delay`: a held /v1/auth answer longer than this is a hung request.
inline constexpr std::chrono::milliseconds longest_max_delay = std::chrono::hours(1);

/// `max_delay` or `delay` of `body` into `p` (whose numbers are read): refused by name on an
/// algorithm without a burst and on a multi-window policy; `delay: N` takes 1..burst-1 and
/// makes `burst` N (the rest queued). Sets p.queue_units. `max_held` (1..largest_max_held)
/// only beside one of them.
void read_delay(const SchemaChecks& in, const ConfigTree& body, const std::string& path, Policy& p);

/// p.queue_units again, after a plan or a tenant's override gave `p` other numbers (the
/// delay fields are the base policy's); fails at `path` when they no longer fit.
void rescale_delay(const SchemaChecks& in, const std::string& path, Policy& p);

}  // namespace ratelimitd::policy
