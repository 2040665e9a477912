// `policies`, `plans`, `tenants`: every limit of the registry, checked field by field.
#include "ratelimitd/policy/limits_section.hpp"

#include "ratelimitd/policy/validate.hpp"
#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/core/quote.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ratelimitd::policy {
namespace {

using config::describe;

constexpr std::int64_t max_limit = 1'000'000'000;
constexpr std::int64_t max_sliding_log_limit = 100'000;
constexpr std::int64_t max_exact_double = std::int64_t{1} << 53;
constexpr std::chrono::milliseconds max_window = std::chrono::hours(24 * 365);
// Windows of one policy: each is a key of the same script call.
constexpr std::size_t max_policy_windows = 8;
// The deepest report debt, in windows of the limit: a key in debt lives at most
// (1 + max_debt / limit) windows, so this bounds how long one report can lock a tenant out.
constexpr std::int64_t max_debt_windows = 100;

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
                "utc_offset", "lease", "max_debt"});

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
    read_alignment(body, path, p);

    read_limits(body, path, p);
    check_long_windows(p, path);
    return p;
}

Algorithm LimitsSection::read_algorithm(const Json& body, const std::string& path) const {
    const std::vector<std::string_view> names(std::begin(algorithm_names), std::end(algorithm_names));
    const Json& v = require(body, path, "algorithm", "one of " + config::join_words(names, ", "));
    return *algorithm_named(need_one_of(v, join(path, "algorithm"), names));
}

void LimitsSection::read_limits(const Json& body, const std::string& path, Policy& p) const {
    const Json* windows = find(body, "windows");
    if (p.algorithm == Algorithm::concurrency) {
        if (find(body, "max_debt") != nullptr) {
            fail(join(path, "max_debt"), "not allowed with algorithm concurrency (a lease cannot be reported)");
        }
        read_lease(body, path, p);
        return;
    }
    if (windows == nullptr) {
        read_window(body, path, p);
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
    read_alignment(item, item_path, w);
    read_window(item, item_path, w);
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

void LimitsSection::read_window(const Json& body, const std::string& path, Policy& p) const {
    const std::string alg = to_string(p.algorithm);
    if (find(body, "lease") != nullptr) {
        fail(join(path, "lease"), "only allowed with algorithm concurrency, this policy uses " + alg);
    }
    const std::string limit_range = "an integer 1.." + std::to_string(max_limit);
    const std::string limit_path = join(path, "limit");
    p.limit = need_int(require(body, path, "limit", limit_range), limit_path, 1, max_limit);

    const std::string window_path = join(path, "window");
    const Json& window = require(body, path, "window", duration_example);
    if (p.calendar) read_calendar_window(window, window_path, p);
    else p.window = need_duration(window, window_path);
    if (p.window > max_window) fail(window_path, "expected at most 365d, got " + describe(window));

    p.burst = p.limit;
    if (const Json* v = find(body, "burst")) {
        const std::string burst_path = join(path, "burst");
        if (!p.has_burst()) {
            fail(burst_path,
                 std::string("only allowed with algorithm token_bucket or gcra, this policy uses ") + alg);
        }
        p.burst = need_int(*v, burst_path, 1, max_limit);
    }

    if (const Json* v = find(body, "max_debt")) p.max_debt = need_int(*v, join(path, "max_debt"), 0, max_limit);
    check_max_debt(p, path);

    if (p.algorithm == Algorithm::sliding_log && p.limit > max_sliding_log_limit) {
        fail(limit_path,
             "expected at most " + std::to_string(max_sliding_log_limit) +
                 " for sliding_log (each admitted unit is one sorted-set member in Redis), got " +
                 std::to_string(p.limit));
    }
    if (p.has_burst() && p.burst > max_exact_double / p.window.count()) {
        // The Lua script scales tokens by milliseconds in doubles; beyond 2^53 it would round.
        fail(path,
             std::string("expected burst * window in ms <= 2^53 (9007199254740992) so the ") +
                 (p.algorithm == Algorithm::gcra ? "GCRA" : "token bucket") + " stays exact in Lua, got " +
                 std::to_string(p.burst) + " * " + std::to_string(p.window.count()));
    }
    if (p.algorithm == Algorithm::sliding_window && p.limit > max_exact_double / p.window.count()) {
        // The counts are weighted by milliseconds of the window in doubles; beyond 2^53 they round.
        fail(path,
             "expected limit * window in ms <= 2^53 (9007199254740992) so the sliding window stays "
             "exact in Lua, got " +
                 std::to_string(p.limit) + " * " + std::to_string(p.window.count()));
    }
}

void LimitsSection::check_max_debt(const Policy& p, const std::string& path) const {
    if (!p.max_debt) return;
    const std::string debt_path = join(path, "max_debt");
    const std::int64_t most = std::min(max_limit, max_debt_windows * p.limit);
    if (*p.max_debt > most) {
        fail(debt_path, "expected at most " + std::to_string(max_debt_windows) + " x limit (" + std::to_string(most) +
                            ": a key in debt lives (1 + max_debt / limit) windows), got " +
                            std::to_string(*p.max_debt));
    }
    // The scripts count debt in the same exact integers as the capacity (see read_window).
    const std::int64_t base = p.has_burst() ? p.burst : p.limit;
    if ((p.has_burst() || p.algorithm == Algorithm::sliding_window) &&
        base + *p.max_debt > max_exact_double / p.window.count()) {
        fail(debt_path, "expected (" + std::string(p.has_burst() ? "burst" : "limit") +
                            " + max_debt) * window in ms <= 2^53 (9007199254740992) so the debt stays exact in "
                            "Lua, got (" + std::to_string(base) + " + " + std::to_string(*p.max_debt) + ") * " +
                            std::to_string(p.window.count()));
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
    check_long_windows(p, path);
    return p;
}

}  // namespace ratelimitd::policy
