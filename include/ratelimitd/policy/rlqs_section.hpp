// `rlqs:` of a config file read into RlqsRules (docs/rlqs.md).
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/rlqs_rules.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

namespace ratelimitd::policy {

/// Reads `rlqs: {DOMAIN: {RULE: {match, limit, window, strategy, blanket, shadow,
/// assignment_ttl, reporting_interval, idle_after}}}` into reg.rlqs, rules in file order. Refuses, naming
/// the field: a rule with neither a budget (limit and window) nor a blanket, or with both; a
/// requests_per_time_unit rule whose window is not 1s, 1m, 1h or 1d (the units Envoy knows);
/// an assignment_ttl not longer than the reporting_interval (Envoy's assignment would expire
/// between two answers); an idle_after shorter than the reporting_interval; a key or value over the bounds of rlqs_bounds.
class RlqsSection : SchemaChecks {
public:
    using SchemaChecks::SchemaChecks;

    void read(const ConfigTree& v, Registry& reg) const;

private:
    [[nodiscard]] RlqsRule read_rule(const ConfigTree& v, const std::string& path, const std::string& name) const;
    void read_match(const ConfigTree& v, const std::string& path, RlqsRule& rule) const;
    void read_budget(const ConfigTree& v, const std::string& path, RlqsRule& rule) const;
    void read_timing(const ConfigTree& v, const std::string& path, RlqsRule& rule) const;
    /// fallback and expected_envoys: what a budget's Envoys get while Redis does not answer.
    void read_fallback(const ConfigTree& v, const std::string& path, RlqsRule& rule) const;
};

}  // namespace ratelimitd::policy
