// The numbers of a policy whose algorithm holds leases (AlgorithmTraits::leases).
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <string>

namespace ratelimitd::policy {

/// `limit` (leases held at once) and `lease:` (how long one holds its slot) of `body` into
/// `p`, instead of a window; refuses window, windows and burst.
void read_lease(const SchemaChecks& in, const ConfigTree& body, const std::string& path, Policy& p);

}  // namespace ratelimitd::policy
