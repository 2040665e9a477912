// The one planner: validate, resolve, apply plans and overrides, check the cost, build keys.
#include "ratelimitd/policy/planner.hpp"

#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/policy/validate.hpp"
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/resolve.hpp"

#include <optional>
#include <string>
#include <utility>

namespace ratelimitd::policy {
namespace {

/// The parts of a request that end up in a key: tenant, scope and plan when given.
result<void> validate_key_parts(const check::CheckRequest& req) {
    if (auto ok = policy::validate_tenant(req.tenant); !ok) return ok.error();
    if (req.scope) {
        if (auto ok = policy::validate_scope(*req.scope); !ok) return ok.error();
    }
    if (req.plan && !policy::is_valid_policy_name(*req.plan)) {
        return Problem{errc::invalid_request,
                       "plan: expected 1..64 bytes of A-Z, a-z, 0-9, '.', '_' or '-', got " + quote(req.plan->substr(0, 64))};
    }
    return {};
}

/// The windows of `p` with their keys: one key for a single-window policy, one hash-tagged
/// key per window for a multi-window one.
/// Written into the plan's own limit (`out`, empty): nothing moved after it is built.
void keyed_windows(KeyedWindows& out, const Policy& p, std::string_view prefix, std::string_view tenant,
                   std::string_view scope) {
    // Policy::key_name() without its string when it is the name alone (no plan): most checks.
    std::string with_plan;
    const std::string_view key_name = p.plan.empty() ? std::string_view(p.name) : (with_plan = p.key_name());
    if (p.windows.empty()) {
        out.push_back(KeyedWindow{&p, p.calendar ? make_calendar_key(prefix, key_name, tenant, scope, to_string(*p.calendar))
                                                 : make_key(prefix, key_name, tenant, scope)});
        return;
    }
    for (const auto& w : p.windows) {
        out.push_back(KeyedWindow{&w, w.calendar ? make_calendar_key(prefix, key_name, tenant, scope, to_string(*w.calendar))
                                                 : make_window_key(prefix, key_name, tenant, scope, format_duration(w.window))});
    }
}

/// Whether the cost ceiling of each limit is checked (checks) or not (admin peek/reset).
enum class CostCheck { ceiling, none };

/// Adds `base` for `tenant` to the plan: with the tenant's override or plan applied, its
/// cost ceiling checked, its keys built.
result<void> add_limit(CheckPlan& out, const Policy& base, std::string_view tenant,
                       const std::optional<std::string>& requested_plan, CostCheck cost_check) {
    auto own = limits_for(*out.registry, base, tenant, requested_plan);
    if (!own) return own.error();
    const Policy& p = **own;
    if (cost_check == CostCheck::ceiling && out.cost > p.max_cost()) {
        return Problem{errc::invalid_cost, "cost: " + std::to_string(out.cost) + " is more than policy \"" + p.name +
                                               "\" can ever admit (" + std::to_string(p.max_cost()) + ")"};
    }
    // Built where it stays: its tenant and keys are not moved again.
    PlannedLimit& limit = out.limits.emplace_back();
    limit.policy = &p;
    limit.tenant = tenant;
    keyed_windows(limit.windows, p, out.registry->prefix, limit.tenant, out.scope);
    return {};
}

}  // namespace

result<CheckPlan> plan(std::shared_ptr<const Registry> registry, const check::CheckRequest& req) {
    CheckPlan out;
    if (auto ok = plan_into(std::move(registry), req, out); !ok) return ok.error();
    return out;
}

result<void> plan_into(std::shared_ptr<const Registry> registry, const check::CheckRequest& req, CheckPlan& out) {
    if (auto ok = validate_key_parts(req); !ok) return ok.error();
    if (auto ok = policy::validate_cost(req.cost); !ok) return ok.error();
    auto resolved = resolve(*registry, req);
    if (!resolved) return resolved.error();

    // Written into the caller's plan, field by field: a plan is a few hundred bytes, and
    // building it apart cost two moves of it per check (into the result, out of it).
    out.registry = std::move(registry);
    out.limits.clear();
    out.tenant = req.tenant;
    out.scope.clear();  // then appended: an assign of a view goes through std::string::_M_replace
    out.scope.append(resolved->scope);
    out.cost = req.cost;
    const Registry& reg = *out.registry;
    if (resolved->route != nullptr && resolved->route->limits.size() > 1) {
        // A layered route: each of its limits spends this tenant's budget, decided as one.
        for (const auto& l : resolved->route->limits) {
            if (auto ok = add_limit(out, *reg.find(l.policy), req.tenant, req.plan, CostCheck::ceiling); !ok) {
                return ok.error();
            }
        }
    } else if (resolved->policy != nullptr) {
        if (auto ok = add_limit(out, *resolved->policy, req.tenant, req.plan, CostCheck::ceiling); !ok) {
            return ok.error();
        }
    }
    return {};
}

result<CheckPlan> plan(std::shared_ptr<const Registry> registry, const AuthRequest& req) {
    // match_route normalises the URI (decoded, dot-segments resolved, slashes merged, ';'
    // parameters cut), so "/%6cogin" or "//login" cannot slip past a "/login" route.
    const Route* route = match_route(*registry, req.method, req.uri);
    return plan_matched(std::move(registry), route, req);
}

result<CheckPlan> plan_matched(std::shared_ptr<const Registry> registry, const Route* route, const AuthRequest& req) {
    // The plan is built inside the result that is returned (one object on every path, so the
    // compiler elides the copy): a plan is a few hundred bytes, moved once per request else.
    result<CheckPlan> planned(CheckPlan{std::move(registry), {}, {}, "global", 1});
    CheckPlan& out = *planned;
    const Registry& reg = *out.registry;
    if (route != nullptr && route->scope) out.scope = *route->scope;
    if (route != nullptr) {
        for (const auto& l : route->limits) {  // empty for policy: none
            const TenantText tenant = identify(reg, l.identity, req.identity, req.hash_secret);
            if (auto ok = add_limit(out, *reg.find(l.policy), tenant, std::nullopt, CostCheck::ceiling); !ok) {
                planned = ok.error();
                return planned;
            }
        }
    } else if (reg.default_policy) {
        const TenantText tenant = identify(reg, std::nullopt, req.identity, req.hash_secret);
        if (auto ok = add_limit(out, *reg.find(*reg.default_policy), tenant, std::nullopt, CostCheck::ceiling); !ok) {
            planned = ok.error();
            return planned;
        }
    } else {
        out.unmatched = true;
    }
    return planned;
}

result<CheckPlan> plan_state(std::shared_ptr<const Registry> registry, const check::CheckRequest& req) {
    if (auto ok = validate_key_parts(req); !ok) return ok.error();
    auto resolved = resolve(*registry, req);
    if (!resolved) return resolved.error();
    if (resolved->policy == nullptr) {
        return Problem{errc::unknown_policy, "policy: the request resolves to \"none\", which keeps no state"};
    }
    CheckPlan out{std::move(registry), {}, req.tenant, std::string(resolved->scope), 1};
    if (auto ok = add_limit(out, *resolved->policy, req.tenant, req.plan, CostCheck::none); !ok) return ok.error();
    return out;
}

}  // namespace ratelimitd::policy
