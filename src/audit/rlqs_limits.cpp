// rlqs_limits: the `rlqs:` rules as an audit entry names them, so a reload that adds, removes
// or changes one says so beside the policies it changed.
#include "ratelimitd/audit/config_changes.hpp"

#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/policy/rlqs_rules.hpp"

namespace ratelimitd::audit {

namespace {

using json = nlohmann::ordered_json;

const char* strategy_name(policy::RlqsStrategy s) {
    return s == policy::RlqsStrategy::token_bucket ? "token_bucket" : "requests_per_time_unit";
}

const char* fallback_name(policy::RlqsFallback f) {
    switch (f) {
        case policy::RlqsFallback::keep_last: return "keep_last";
        case policy::RlqsFallback::local_share: return "local_share";
        case policy::RlqsFallback::deny: return "deny";
    }
    return "keep_last";
}

// The match decides which buckets the rule names, so a changed match is a changed rule. It is
// bounded by the section (16 keys of at most 128 bytes, values of at most 256).
json match_of(const policy::RlqsRule& rule) {
    json out = json::object();
    for (const auto& m : rule.match) out[m.key] = m.value;
    return out;
}

json budget_numbers(const policy::RlqsRule& rule) {
    json out = {{"limit", rule.limit},
                {"window", format_duration(rule.window)},
                {"strategy", strategy_name(rule.strategy)},
                {"fallback", fallback_name(rule.fallback)}};
    if (rule.fallback == policy::RlqsFallback::local_share) out["expected_envoys"] = rule.expected_envoys;
    return out;
}

// Whatever the rule holds that changes what its buckets are assigned, or when.
json rule_numbers(const policy::RlqsRule& rule) {
    json out = {{"match", match_of(rule)}};
    if (rule.blanket != policy::RlqsBlanket::none) {
        out["blanket"] = rule.blanket == policy::RlqsBlanket::allow_all ? "allow_all" : "deny_all";
    } else {
        out.update(budget_numbers(rule));
    }
    if (rule.shadow) out["shadow"] = true;
    out["reporting_interval"] = format_duration(rule.reporting_interval);
    out["assignment_ttl"] = format_duration(rule.assignment_ttl);
    out["idle_after"] = format_duration(rule.idle_after);
    return out;
}

}  // namespace

LimitSet rlqs_limits(const policy::Registry& registry) {
    LimitSet out;
    if (registry.rlqs == nullptr) return out;
    for (const auto& [domain, rules] : registry.rlqs->domains) {
        for (const auto& rule : rules) out["rlqs:" + domain + "/" + rule.name] = rule_numbers(rule);
    }
    return out;
}

}  // namespace ratelimitd::audit
