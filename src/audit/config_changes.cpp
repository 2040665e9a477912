// enforced_limits, limit_changes, limits_digest: what an audit entry says a reload changed.
#include "ratelimitd/audit/config_changes.hpp"

#include "ratelimitd/core/calendar.hpp"
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <openssl/sha.h>

namespace ratelimitd::audit {

namespace {

using json = nlohmann::ordered_json;

json window_numbers(const policy::Policy& w) {
    json out = {{"limit", w.limit}, {"window", format_duration(w.window)}};
    if (w.has_burst()) out["burst"] = w.burst;
    return out;
}

// Whatever the policy holds that changes what it admits.
json policy_numbers(const policy::Policy& p) {
    json out = {{"algorithm", policy::to_string(p.algorithm)}};
    if (p.windows.empty()) {
        out.update(window_numbers(p));
    } else {
        json windows = json::array();
        for (const auto& w : p.windows) {
            json entry = {{"name", w.name}};
            entry.update(window_numbers(w));
            windows.push_back(std::move(entry));
        }
        out["windows"] = std::move(windows);
    }
    if (p.calendar) {
        out["calendar"] = std::string(to_string(*p.calendar));
        if (p.utc_offset_minutes != 0) out["utc_offset_minutes"] = p.utc_offset_minutes;
    }
    if (p.lease.count() != 0) out["lease"] = format_duration(p.lease);
    if (p.max_debt) out["max_debt"] = *p.max_debt;
    out["on_store_error"] = p.on_store_error == policy::OnStoreError::allow ? "allow" : "deny";
    if (p.shadow) out["shadow"] = true;
    return out;
}

json rule_numbers(const policy::RlsRule& rule) {
    if (rule.limit == policy::RlsRule::Limit::unlimited) return {{"unlimited", true}};
    json out = {{"requests_per_unit", rule.requests_per_unit}, {"unit", policy::to_string(rule.unit)}};
    if (rule.policy.shadow) out["shadow"] = true;
    return out;
}

void add_rules(const policy::RlsLevel& level, LimitSet& out) {
    for (const auto& rule : level.rules) {
        if (rule.limit != policy::RlsRule::Limit::none) out["envoy:" + rule.label] = rule_numbers(rule);
        add_rules(rule.children, out);
    }
}

// Adds `name: value` to `section` while fewer than `max` are listed, else counts it.
void list_or_count(json& changes, const char* section, const char* more, const std::string& name, json value,
                   std::size_t max) {
    if (changes[section].size() < max) {
        changes[section][name] = std::move(value);
    } else {
        changes[more] = changes.value(more, 0) + 1;
    }
}

}  // namespace

LimitSet envoy_limits(const policy::Registry& registry) {
    LimitSet out;
    if (registry.domains == nullptr) return out;
    for (const auto& [name, domain] : registry.domains->by_name) add_rules(domain.root, out);
    return out;
}

LimitSet enforced_limits(const policy::Registry& registry) {
    LimitSet out = envoy_limits(registry);
    out.merge(rlqs_limits(registry));
    for (const auto& [name, p] : registry.policies) out[name] = policy_numbers(p);
    for (const auto& [plan_name, plan] : registry.plans) {
        for (const auto& [name, p] : plan.policies) out[name + "@" + plan_name] = policy_numbers(p);
    }
    for (const auto& [tenant, settings] : registry.tenants) {
        for (const auto& [name, p] : settings.overrides) out[name + "@tenant:" + tenant] = policy_numbers(p);
    }
    return out;
}

json limit_changes(const LimitSet& before, const LimitSet& after, std::size_t max_listed) {
    json changes = {{"added", json::object()}, {"removed", json::object()}, {"changed", json::object()}};
    for (const auto& [name, numbers] : after) {
        auto old = before.find(name);
        if (old == before.end()) {
            list_or_count(changes, "added", "more_added", name, numbers, max_listed);
        } else if (old->second != numbers) {
            list_or_count(changes, "changed", "more_changed", name, {{"old", old->second}, {"new", numbers}},
                          max_listed);
        }
    }
    for (const auto& [name, numbers] : before) {
        if (!after.contains(name)) list_or_count(changes, "removed", "more_removed", name, numbers, max_listed);
    }
    return changes;
}

std::string limits_digest(const LimitSet& limits) {
    // The dump of an object of every limit by name, in name order, written piece by piece: an
    // ordered_json object finds each key by a linear search, so building one was quadratic
    // (90,000 xDS rules took most of a minute). The text, and so the digest, is the same.
    std::string text = "{";
    for (const auto& [name, numbers] : limits) {
        if (text.size() > 1) text += ',';
        text += json(name).dump();
        text += ':';
        text += numbers.dump();
    }
    text += '}';
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    return "sha256:" + to_hex(std::span<const unsigned char>(digest, sizeof digest));
}

}  // namespace ratelimitd::audit
