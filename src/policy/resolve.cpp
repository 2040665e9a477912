// Policy resolution: request policy, else first matching route, else default_policy.
#include "ratelimitd/policy/resolve.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/path.hpp"

namespace ratelimitd::policy {
namespace {

constexpr std::size_t max_known_listed = 20;  // a huge registry must not make a huge detail

/// `<field>: "<name>" is not defined (known: a, b, ...)` over the names of `defined`.
template <class Map>
Problem not_defined(errc code, std::string_view field, std::string_view name, const Map& defined) {
    std::string detail = std::string(field) + ": " + quote(name) + " is not defined (known: ";
    std::size_t listed = 0;
    for (const auto& entry : defined) {
        if (listed == max_known_listed) {
            detail += ", ...";
            break;
        }
        if (listed++ > 0) detail += ", ";
        detail += entry.first;
    }
    if (listed == 0) detail += "none";
    detail += ')';
    return Problem{code, std::move(detail)};
}

Problem unknown_policy(const Registry& reg, std::string_view name) {
    return not_defined(errc::unknown_policy, "policy", name, reg.policies);
}

char ascii_upper(char c) noexcept {
    return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}

/// Route methods are stored upper-case; callers of /v1/check may write "post".
bool same_method(std::string_view route_method, std::string_view method) noexcept {
    if (route_method.size() != method.size()) return false;
    for (std::size_t i = 0; i < method.size(); ++i) {
        if (route_method[i] != ascii_upper(method[i])) return false;
    }
    return true;
}

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

/// `a` and `b` equal, letters in either case when `ci`.
bool same_text(std::string_view a, std::string_view b, bool ci) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const char x = ci && a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
        if (x != b[i]) return false;
    }
    return true;
}

/// `normal` is normalize_path()'s output (lower-cased for a case-insensitive route). A prefix
/// route matches what starts with its prefix; an exact one matches with or without a trailing
/// slash ("/login" and "/login/" name one resource to most backends, and either may be a
/// route's spelling).
bool path_matches(const Route& route, std::string_view normal) noexcept {
    std::string_view pattern = route.path;
    const bool ci = route.case_insensitive;
    if (pattern.ends_with('*')) {
        pattern.remove_suffix(1);
        return normal.size() >= pattern.size() && same_text(pattern, normal.substr(0, pattern.size()), ci);
    }
    if (pattern.size() > 1 && pattern.ends_with('/')) pattern.remove_suffix(1);
    if (normal.size() > 1 && normal.ends_with('/')) normal.remove_suffix(1);
    return same_text(pattern, normal, ci);
}

}  // namespace

/// The first route matching `method` and `path` (one reading of the request's path).
const Route* first_match(const Registry& reg, std::string_view method, std::string_view path) {
    std::string folded;  // the path in lower case, made once if a route wants it
    for (const auto& route : reg.routes) {
        if (route.method && !same_method(*route.method, method)) continue;
        if (route.case_insensitive && folded.empty()) folded = ascii_lower(path);
        if (path_matches(route, route.case_insensitive ? folded : path)) return &route;
    }
    return nullptr;
}

bool is_limited(const Route* route) noexcept { return route != nullptr && route->policy != no_policy; }

const Route* match_normal_route(const Registry& reg, std::string_view method, std::string_view path) {
    return first_match(reg, method, path);
}

const Route* match_route(const Registry& reg, std::string_view method, std::string_view path) {
    // Both readings below are the path itself: one walk of the routes, no copy.
    if (is_normal_path(path)) return first_match(reg, method, path);
    const Route* normal = first_match(reg, method, normalize_path(path));
    if (is_limited(normal)) return normal;
    // "/api/../health" is /health to nginx but /api/... to a backend that does not normalise:
    // when the normal form is unlimited, the path as sent may not escape a limited route.
    const Route* as_sent = first_match(reg, method, path_as_sent(path));
    return is_limited(as_sent) ? as_sent : normal;
}

result<const Policy*> limits_for(const Registry& reg, const Policy& base, std::string_view tenant,
                                 const std::optional<std::string>& requested_plan) {
    const auto t = reg.tenants.find(tenant);
    if (t != reg.tenants.end()) {
        if (auto o = t->second.overrides.find(base.name); o != t->second.overrides.end()) return &o->second;
    }
    const std::string* plan_name = nullptr;
    if (requested_plan) {
        plan_name = &*requested_plan;
    } else if (t != reg.tenants.end() && t->second.plan) {
        plan_name = &*t->second.plan;
    }
    if (plan_name == nullptr) return &base;
    const auto plan = reg.plans.find(*plan_name);
    if (plan == reg.plans.end()) return not_defined(errc::unknown_plan, "plan", *plan_name, reg.plans);
    const auto limits = plan->second.policies.find(base.name);
    return limits == plan->second.policies.end() ? &base : &limits->second;
}

result<Resolved> resolve(const Registry& reg, const check::CheckRequest& req) {
    const Route* route = nullptr;
    std::string_view name;
    if (req.policy) {
        // "none" is only a route target: a caller naming it directly gets unknown_policy,
        // so a request body can never switch limiting off by itself.
        name = *req.policy;
    } else {
        if (req.path) route = match_route(reg, req.method.value_or(std::string{}), *req.path);
        if (route != nullptr) {
            name = route->policy;
        } else if (reg.default_policy) {
            name = *reg.default_policy;
        } else {
            return Problem{errc::unknown_policy,
                           "policy: not given, no route matches and no default_policy is set"};
        }
    }

    Resolved out;
    out.route = route;
    if (req.scope) {
        out.scope = *req.scope;
    } else if (route != nullptr && route->scope) {
        out.scope = *route->scope;
    } else {
        out.scope = "global";
    }

    if (route != nullptr && route->policy == no_policy) return out;  // not limited
    out.policy = reg.find(name);
    if (out.policy == nullptr) return unknown_policy(reg, name);
    return out;
}

}  // namespace ratelimitd::policy
