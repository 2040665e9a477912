// `policies`, `plans`, `tenants`: every limit of the registry, checked field by field.
#include "ratelimitd/policy/limits_section.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/calendar_section.hpp"
#include "ratelimitd/policy/delay_limits.hpp"
#include "ratelimitd/policy/lease_limits.hpp"
#include "ratelimitd/policy/validate.hpp"
#include "ratelimitd/policy/window_limits.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ratelimitd::policy {
namespace {

using config::describe;

// Windows of one policy: each is a key of the same script call.
constexpr std::size_t max_policy_windows = 8;

}  // namespace

void LimitsSection::read_policies(const Json& root, Registry& reg) const {
    const std::string expected = "a map of policy names to policies";
    const Json& v = require(root, "", "policies", expected);
    if (!v.is_object()) fail("policies", "expected " + expected + ", got " + describe(v));
    if (v.empty()) fail("policies", "expected at least one policy");
    for (const auto& [name, body] : v.items()) {
        const std::string path = join("policies", name);
        if (name == no_policy) {
            fail(path, "\"none\" is reserved for routes that are not limited; choose another name");
        }
        if (!policy::is_valid_policy_name(name)) {
            fail(path, std::string("expected a policy name of ") + name_charset);
        }
        reg.policies.emplace(name, read_policy(name, body, path));
    }
}

Policy LimitsSection::read_policy(const std::string& name, const Json& body,
                              const std::string& path) const {
    if (!body.is_object()) {
        fail(path, "expected a map with algorithm, limit and window, got " + describe(body));
    }
    check_keys(body, path,
               {"algorithm", "limit", "window", "burst", "windows", "on_store_error", "shadow", "long_ttl", "align",
                "utc_offset", "lease", "max_debt", "max_delay", "delay", "max_held"});

    Policy p;
    p.name = name;

    p.algorithm = read_algorithm(body, path);

    if (const Json* v = find(body, "on_store_error")) {
        p.on_store_error =
            need_one_of(*v, join(path, "on_store_error"), {"allow", "deny"}) == "deny"
                ? OnStoreError::deny
                : OnStoreError::allow;
    }
    if (const Json* v = find(body, "shadow")) p.shadow = need_bool(*v, join(path, "shadow"));
    if (const Json* v = find(body, "long_ttl")) p.long_ttl = need_bool(*v, join(path, "long_ttl"));
    read_alignment(*this, body, path, p);

    read_limits(body, path, p);
    read_delay(*this, body, path, p);
    check_long_windows(p, path);
    return p;
}

Algorithm LimitsSection::read_algorithm(const Json& body, const std::string& path) const {
    const std::vector<std::string_view> names = algorithm_names();
    const Json& v = require(body, path, "algorithm", "one of " + config::join_words(names, ", "));
    return *algorithm_named(need_one_of(v, join(path, "algorithm"), names));
}

void LimitsSection::read_limits(const Json& body, const std::string& path, Policy& p) const {
    const Json* windows = find(body, "windows");
    if (traits(p.algorithm).leases) {
        if (find(body, "max_debt") != nullptr) {
            fail(join(path, "max_debt"), "not allowed with algorithm " + std::string(to_string(p.algorithm)) +
                                             " (a lease cannot be reported)");
        }
        read_lease(*this, body, path, p);
        return;
    }
    if (windows == nullptr) {
        read_window(*this, body, path, p);
        return;
    }
    for (const char* single : {"limit", "window", "burst"}) {
        if (find(body, single) != nullptr) {
            fail(join(path, single), "not allowed with windows (each window has its own)");
        }
    }
    const std::string windows_path = join(path, "windows");
    const std::string expected = "a list of 2.." + std::to_string(max_policy_windows) +
                                 " windows such as {limit: 100, window: 1m}";
    if (!windows->is_array() || windows->size() < 2 || windows->size() > max_policy_windows) {
        fail(windows_path, "expected " + expected + ", got " +
                               (windows->is_array() ? std::to_string(windows->size()) + " windows"
                                                    : describe(*windows)));
    }
    // A policy-wide max_debt is each window's, unless the window sets its own; each is
    // bounded by its own window's numbers (check_max_debt).
    if (const Json* v = find(body, "max_debt")) p.max_debt = need_int(*v, join(path, "max_debt"), 0, max_limit);
    p.windows.clear();
    std::size_t i = 0;
    // Each window has its own alignment (inherited from the policy's); the policy's own
    // fields then hold the first window's, as they hold its numbers.
    for (const auto& item : *windows) p.windows.push_back(read_window_item(item, join(windows_path, i++), p));
    const Policy& first = p.windows.front();
    p.limit = first.limit;
    p.window = first.window;
    p.burst = first.burst;
    p.calendar = first.calendar;
    p.utc_offset_minutes = first.utc_offset_minutes;
    p.max_debt = first.max_debt;
}

Policy LimitsSection::read_window_item(const Json& item, const std::string& item_path, const Policy& p) const {
    if (!item.is_object()) fail(item_path, "expected a map with limit and window, got " + describe(item));
    check_keys(item, item_path, {"limit", "window", "burst", "name", "align", "utc_offset", "max_debt"});
    Policy w;
    w.algorithm = p.algorithm;
    w.on_store_error = p.on_store_error;
    w.shadow = p.shadow;
    w.long_ttl = p.long_ttl;
    w.plan = p.plan;
    w.calendar = p.calendar;
    w.utc_offset_minutes = p.utc_offset_minutes;
    w.max_debt = p.max_debt;
    read_alignment(*this, item, item_path, w);
    read_window(*this, item, item_path, w);
    // The IETF item name: distinct per window, so clients can tell them apart.
    w.name = p.name + "-" + format_duration(w.window);
    if (const Json* n = find(item, "name")) {
        const std::string name_path = join(item_path, "name");
        const std::string name_expected = std::string("a window name of ") + name_charset;
        w.name = need_string(*n, name_path, name_expected);
        if (!policy::is_valid_policy_name(w.name)) {
            fail(name_path, "expected " + name_expected + ", got " + describe(*n));
        }
    }
    for (std::size_t j = 0; j < p.windows.size(); ++j) {
        // Each window's key ends with its span: two equal spans would share one key.
        if (p.windows[j].window == w.window) {
            fail(join(item_path, "window"), "duplicate span " + format_duration(w.window) + " (" +
                                                join("windows", j) + " has it too)");
        }
        if (p.windows[j].name == w.name) {
            fail(join(item_path, "name"), quote(w.name) + " is already the name of " + join("windows", j));
        }
    }
    return w;
}

void LimitsSection::check_long_windows(const Policy& p, const std::string& path) const {
    if (p.long_ttl) return;
    const auto check = [&](const Policy& w, const std::string& window_path) {
        if (w.window > std::chrono::hours(24)) {
            fail(window_path, "a window longer than 1d keeps its keys longer than a day (got " +
                                  format_duration(w.window) + "); set long_ttl: true on the policy to confirm");
        }
    };
    if (p.windows.empty()) {
        check(p, join(path, "window"));
        return;
    }
    for (std::size_t i = 0; i < p.windows.size(); ++i) {
        check(p.windows[i], join(join(join(path, "windows"), i), "window"));
    }
}

void LimitsSection::read_plans(const Json& v, Registry& reg) const {
    if (v.is_null()) return;
    const std::string expected = "a map of plan names to {policy: limits} maps";
    if (!v.is_object()) fail("plans", "expected " + expected + ", got " + describe(v));
    for (const auto& [plan_name, body] : v.items()) {
        const std::string path = join("plans", plan_name);
        if (!policy::is_valid_policy_name(plan_name)) fail(path, std::string("expected a plan name of ") + name_charset);
        if (plan_name == tenant_override_label) {
            fail(path, "\"tenant\" is reserved (it marks a tenant's own overrides in keys); choose another name");
        }
        if (!body.is_object() || body.empty()) {
            fail(path, "expected a map of policy names to limits such as {api-default: {limit: 600, window: 1m}}, got " +
                           describe(body));
        }
        reg.plans.emplace(plan_name, Plan{read_variants(body, path, plan_name, reg)});
    }
}

void LimitsSection::read_tenants(const Json& v, Registry& reg) const {
    if (v.is_null()) return;
    const std::string expected = "a map of tenant ids to {plan, overrides}";
    if (!v.is_object()) fail("tenants", "expected " + expected + ", got " + describe(v));
    for (const auto& [tenant, body] : v.items()) {
        const std::string path = join("tenants", tenant);
        if (const auto ok = policy::validate_tenant(tenant); !ok) fail(path, without_field_name(ok.error(), "tenant"));
        if (!body.is_object() || body.empty()) {
            fail(path, "expected a map with plan and/or overrides, got " + describe(body));
        }
        check_keys(body, path, {"plan", "overrides"});
        TenantSettings t;
        if (const Json* plan = find(body, "plan")) {
            const std::string plan_path = join(path, "plan");
            std::string name = need_string(*plan, plan_path, "a plan name");
            if (reg.plans.find(name) == reg.plans.end()) fail(plan_path, quote(name) + " is not a defined plan");
            t.plan = std::move(name);
        }
        if (const Json* overrides = find(body, "overrides")) {
            const std::string overrides_path = join(path, "overrides");
            if (!overrides->is_object() || overrides->empty()) {
                fail(overrides_path, "expected a map of policy names to limits, got " + describe(*overrides));
            }
            t.overrides = read_variants(*overrides, overrides_path, tenant_override_label, reg);
        }
        reg.tenants.emplace(tenant, std::move(t));
    }
}

std::map<std::string, Policy, std::less<>> LimitsSection::read_variants(const Json& body, const std::string& path,
                                                                   const std::string& label,
                                                                   const Registry& reg) const {
    std::map<std::string, Policy, std::less<>> out;
    for (const auto& [policy_name, limits] : body.items()) {
        const std::string policy_path = join(path, policy_name);
        const Policy* base = reg.find(policy_name);
        if (base == nullptr) fail(policy_path, quote(policy_name) + " is not a defined policy");
        out.emplace(policy_name, read_variant(*base, label, limits, policy_path));
    }
    return out;
}

Policy LimitsSection::read_variant(const Policy& base, const std::string& label, const Json& body,
                               const std::string& path) const {
    if (!body.is_object()) fail(path, "expected a map with limit and window, or windows, got " + describe(body));
    for (const char* inherited : {"algorithm", "on_store_error", "shadow", "long_ttl"}) {
        if (find(body, inherited) != nullptr) {
            fail(join(path, inherited), std::string("inherited from policies.") + path_segment(base.name) +
                                            "; a plan or override sets only limit, window, burst or windows");
        }
    }
    check_keys(body, path, {"limit", "window", "burst", "windows", "lease", "max_debt"});
    Policy p = base;
    p.plan = label;
    p.windows.clear();
    read_limits(body, path, p);
    rescale_delay(*this, path, p);
    check_long_windows(p, path);
    return p;
}

}  // namespace ratelimitd::policy
