// What a config load changed, for the audit trail: the numbers of every limit a registry
// enforces, the difference between two such sets (added, removed, changed old -> new) and a
// digest of a set.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <string>

namespace ratelimitd::audit {

/// Every limit by name, with its numbers: a policy by its name ({"algorithm", "limit",
/// "window", "burst"...}); a plan's limits by "policy@plan"; a tenant's override by
/// "policy@tenant:<id>"; an Envoy rule (domains, envoy_config, xDS) by "envoy:<rule label>";
/// an `rlqs:` rule by "rlqs:<domain>/<rule>" ({"match", "limit", "window", "strategy",
/// "fallback"... or "blanket"}).
/// Tenant ids and rule labels are not secrets; nothing here is (no hash secret, no URL).
using LimitSet = std::map<std::string, nlohmann::ordered_json, std::less<>>;

/// The limits `registry` enforces (its file's policies, plans, overrides, Envoy rules and
/// `rlqs:` rules).
LimitSet enforced_limits(const policy::Registry& registry);

/// The Envoy rules of `registry` only (what an xDS update replaces).
LimitSet envoy_limits(const policy::Registry& registry);

/// The `rlqs:` rules of `registry` only (src/audit/rlqs_limits.cpp).
LimitSet rlqs_limits(const policy::Registry& registry);

/// {"added": {name: numbers}, "removed": {name: numbers}, "changed": {name: {"old", "new"}}},
/// each listing at most `max_listed` names (in name order) and, past them,
/// "more_added"/"more_removed"/"more_changed" counting the rest, so one entry stays bounded.
nlohmann::ordered_json limit_changes(const LimitSet& before, const LimitSet& after, std::size_t max_listed = 100);

/// "sha256:<hex>" of the set's canonical form (its JSON, names in order).
std::string limits_digest(const LimitSet& limits);

}  // namespace ratelimitd::audit
