// `rlqs:` read into RlqsRules: the buckets of Envoy's rate_limit_quota filter and their quotas.
#include "ratelimitd/policy/rlqs_section.hpp"

#include "ratelimitd/config/tree_values.hpp"

#include <memory>

namespace ratelimitd::policy {

namespace {

using config::describe;
using namespace std::chrono_literals;

// The filter's time units (envoy.type.v3.RateLimitUnit) a requests_per_time_unit window can be.
bool is_envoy_time_unit(std::chrono::milliseconds window) {
    return window == 1s || window == 1min || window == 1h || window == 24h;
}

}  // namespace

void RlqsSection::read(const ConfigTree& v, Registry& reg) const {
    if (v.is_null()) return;
    if (!v.is_object()) fail("rlqs", "expected a map of domains to their bucket rules, got " + describe(v));
    if (v.size() > rlqs_bounds::max_domains) {
        fail("rlqs", "more than " + std::to_string(rlqs_bounds::max_domains) + " domains");
    }
    auto rules = std::make_shared<RlqsRules>();
    for (const auto& [domain, body] : v.items()) {
        const std::string path = join("rlqs", domain);
        if (domain.empty() || domain.size() > rlqs_bounds::max_value_bytes) {
            fail(path, "expected a domain of 1 to " + std::to_string(rlqs_bounds::max_value_bytes) + " bytes");
        }
        if (!body.is_object() || body.empty()) fail(path, "expected a map of rule names to rules, got " + describe(body));
        if (body.size() > rlqs_bounds::max_rules_per_domain) {
            fail(path, "more than " + std::to_string(rlqs_bounds::max_rules_per_domain) + " rules");
        }
        auto& list = rules->domains[domain];
        for (const auto& [name, rule] : body.items()) {
            const std::string rule_path = join(path, name);
            if (!is_valid_policy_name(name)) fail(rule_path, std::string("expected a rule name of ") + name_charset);
            list.push_back(read_rule(rule, rule_path, name));
        }
    }
    reg.rlqs = std::move(rules);
}

RlqsRule RlqsSection::read_rule(const ConfigTree& v, const std::string& path, const std::string& name) const {
    if (!v.is_object()) fail(path, "expected a rule {match, limit, window, ...}, got " + describe(v));
    check_keys(v, path, {"match", "limit", "window", "strategy", "blanket", "shadow", "assignment_ttl",
                         "reporting_interval", "idle_after", "fallback", "expected_envoys"});
    RlqsRule rule;
    rule.name = name;
    if (const ConfigTree* m = find(v, "match")) read_match(*m, join(path, "match"), rule);
    read_budget(v, path, rule);
    if (const ConfigTree* s = find(v, "shadow")) rule.shadow = need_bool(*s, join(path, "shadow"));
    read_timing(v, path, rule);
    read_fallback(v, path, rule);
    return rule;
}

void RlqsSection::read_match(const ConfigTree& v, const std::string& path, RlqsRule& rule) const {
    if (!v.is_object()) fail(path, "expected a map of bucket keys to values, got " + describe(v));
    if (v.size() > rlqs_bounds::max_matches_per_rule) {
        fail(path, "more than " + std::to_string(rlqs_bounds::max_matches_per_rule) + " keys");
    }
    for (const auto& [key, value] : v.items()) {
        const std::string key_path = join(path, key);
        if (key.empty() || key.size() > rlqs_bounds::max_key_bytes) {
            fail(key_path, "expected a key of 1 to " + std::to_string(rlqs_bounds::max_key_bytes) + " bytes");
        }
        RlqsMatch m{key, need_string(value, key_path, "a value (with '*' for any run of bytes)"), std::nullopt};
        if (m.value.empty() || m.value.size() > rlqs_bounds::max_value_bytes) {
            fail(key_path, "expected a value of 1 to " + std::to_string(rlqs_bounds::max_value_bytes) + " bytes");
        }
        if (m.value.find('*') != std::string::npos) m.pattern.emplace(m.value);
        rule.match.push_back(std::move(m));
    }
}

void RlqsSection::read_budget(const ConfigTree& v, const std::string& path, RlqsRule& rule) const {
    const ConfigTree* blanket = find(v, "blanket");
    const ConfigTree* limit = find(v, "limit");
    if (blanket != nullptr) {
        if (limit != nullptr || find(v, "window") != nullptr || find(v, "strategy") != nullptr) {
            fail(path, "a blanket rule has no limit, window or strategy");
        }
        const auto which = need_one_of(*blanket, join(path, "blanket"), {"allow_all", "deny_all"});
        rule.blanket = which == "allow_all" ? RlqsBlanket::allow_all : RlqsBlanket::deny_all;
        return;
    }
    if (limit == nullptr) fail(path, "expected a limit and a window, or a blanket (allow_all or deny_all)");
    // A uint32 bound: a token bucket's max_tokens is one.
    rule.limit = need_int(*limit, join(path, "limit"), 1, 4'294'967'295);
    rule.window = need_duration(require(v, path, "window", "a duration"), join(path, "window"));
    if (rule.window < 1s) fail(join(path, "window"), "expected at least 1s");
    if (const ConfigTree* s = find(v, "strategy")) {
        const auto which = need_one_of(*s, join(path, "strategy"), {"token_bucket", "requests_per_time_unit"});
        rule.strategy = which == "token_bucket" ? RlqsStrategy::token_bucket : RlqsStrategy::requests_per_time_unit;
    }
    if (rule.strategy == RlqsStrategy::requests_per_time_unit && !is_envoy_time_unit(rule.window)) {
        fail(join(path, "window"), "expected 1s, 1m, 1h or 1d with requests_per_time_unit (Envoy's time units)");
    }
}

void RlqsSection::read_fallback(const ConfigTree& v, const std::string& path, RlqsRule& rule) const {
    if (const ConfigTree* f = find(v, "fallback")) {
        const auto which = need_one_of(*f, join(path, "fallback"), {"keep_last", "local_share", "deny"});
        rule.fallback = which == "keep_last"     ? RlqsFallback::keep_last
                        : which == "local_share" ? RlqsFallback::local_share
                                                 : RlqsFallback::deny;
    }
    if (const ConfigTree* e = find(v, "expected_envoys")) {
        rule.expected_envoys = need_int(*e, join(path, "expected_envoys"), 1, 1'000'000);
    }
}

void RlqsSection::read_timing(const ConfigTree& v, const std::string& path, RlqsRule& rule) const {
    rule.reporting_interval = 5s;
    if (const ConfigTree* r = find(v, "reporting_interval")) {
        rule.reporting_interval = need_duration(*r, join(path, "reporting_interval"));
        if (rule.reporting_interval < 100ms) fail(join(path, "reporting_interval"), "expected at least 100ms");
    }
    // Three intervals by default: one lost report does not expire an assignment.
    rule.assignment_ttl = 3 * rule.reporting_interval;
    if (const ConfigTree* t = find(v, "assignment_ttl")) {
        rule.assignment_ttl = need_duration(*t, join(path, "assignment_ttl"));
        if (rule.assignment_ttl <= rule.reporting_interval) {
            fail(join(path, "assignment_ttl"), "expected longer than reporting_interval (" +
                                                   std::to_string(rule.reporting_interval.count()) + "ms)");
        }
    }
    // Ten intervals by default: a bucket is not dropped between two bursts of a slow client.
    rule.idle_after = 10 * rule.reporting_interval;
    if (const ConfigTree* i = find(v, "idle_after")) {
        rule.idle_after = need_duration(*i, join(path, "idle_after"));
        if (rule.idle_after < rule.reporting_interval) {
            fail(join(path, "idle_after"), "expected at least reporting_interval (" +
                                               std::to_string(rule.reporting_interval.count()) + "ms)");
        }
    }
}

}  // namespace ratelimitd::policy
