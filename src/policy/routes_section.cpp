// `routes`: the route table, each route checked against the policies and identity sources.
#include "ratelimitd/policy/routes_section.hpp"

#include "ratelimitd/policy/validate.hpp"
#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/path.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::policy {
namespace {

using config::describe;

// Limits of one route go to Redis as one script call with one key each: keep it small.
constexpr std::size_t max_route_limits = 8;

}  // namespace

std::string RoutesSection::read_route_path(const Json& item, const std::string& path) const {
    const std::string path_path = join(path, "path");
    const std::string path_expected = "a path starting with '/'";
    std::string text = need_string(require(item, path, "path", path_expected), path_path, path_expected);
    if (!text.starts_with('/')) fail(path_path, "expected " + path_expected + ", got " + quote(text));
    if (const auto star = text.find('*'); star != std::string::npos && star + 1 != text.size()) {
        fail(path_path, "expected '*' only at the end (a prefix match), got " + quote(text));
    }
    // Requests are matched in normal form; a pattern in another form could never match.
    if (const std::string normal = normalize_path(text); normal != text) {
        fail(path_path, "expected a normalised path (write " + quote(normal) + "), got " + quote(text));
    }
    return text;
}

std::string RoutesSection::read_route_method(const Json& m, const std::string& method_path) const {
    const std::string expected = "an HTTP method such as GET or POST (letters only)";
    std::string method = need_string(m, method_path, expected);
    bool letters = !method.empty();
    for (char& c : method) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        letters = letters && c >= 'A' && c <= 'Z';
    }
    if (!letters) fail(method_path, "expected " + expected + ", got " + describe(m));
    return method;
}

void RoutesSection::read_routes(const Json& v, Registry& reg, bool case_insensitive) const {
    if (v.is_null()) return;  // `routes:` with every entry commented out
    if (!v.is_array()) fail("routes", "expected a list of routes, got " + describe(v));
    std::size_t i = 0;
    for (const auto& item : v) {
        const std::string path = join("routes", i++);
        if (!item.is_object()) {
            fail(path, "expected a map with path and policy, got " + describe(item));
        }
        check_keys(item, path, {"method", "path", "policy", "limits", "scope", "case_insensitive"});

        Route r;
        r.path = read_route_path(item, path);
        r.case_insensitive = case_insensitive;
        if (const Json* ci = find(item, "case_insensitive")) {
            r.case_insensitive = need_bool(*ci, join(path, "case_insensitive"));
        }

        if (const Json* m = find(item, "method")) r.method = read_route_method(*m, join(path, "method"));

        const Json* limits = find(item, "limits");
        if (limits != nullptr) {
            if (find(item, "policy") != nullptr) {
                fail(path, "expected either policy or limits, not both");
            }
            read_route_limits(*limits, join(path, "limits"), reg, r);
        } else {
            const std::string policy_path = join(path, "policy");
            const std::string expected = "a policy name or \"none\", or limits: a list of limits";
            r.policy = need_string(require(item, path, "policy", expected), policy_path,
                                   "a policy name or \"none\"");
            if (r.policy != no_policy && reg.find(r.policy) == nullptr) {
                fail(policy_path, quote(r.policy) + " is not a defined policy");
            }
            if (r.policy != no_policy) r.limits.push_back(RouteLimit{r.policy, std::nullopt});
        }

        if (const Json* s = find(item, "scope")) {
            const std::string scope_path = join(path, "scope");
            std::string scope = need_string(*s, scope_path, "a scope such as POST_/v1/exports");
            if (const auto ok = policy::validate_scope(scope); !ok) fail(scope_path, without_field_name(ok.error(), "scope"));
            r.scope = std::move(scope);
        }
        reg.routes.push_back(std::move(r));
    }
}

void RoutesSection::read_route_limits(const Json& v, const std::string& path, const Registry& reg,
                                  Route& r) const {
    const std::string expected = "a list of 1.." + std::to_string(max_route_limits) +
                                 " limits such as {policy: per-ip, identity: client_ip}";
    if (!v.is_array() || v.empty() || v.size() > max_route_limits) {
        fail(path, "expected " + expected + ", got " +
                       (v.is_array() ? std::to_string(v.size()) + " limits" : describe(v)));
    }
    std::size_t i = 0;
    for (const auto& item : v) {
        const std::string limit_path = join(path, i++);
        if (!item.is_object()) {
            fail(limit_path, "expected a map with policy [and identity], got " + describe(item));
        }
        check_keys(item, limit_path, {"policy", "identity"});

        RouteLimit limit;
        const std::string policy_path = join(limit_path, "policy");
        limit.policy = need_string(require(item, limit_path, "policy", "a policy name"),
                                   policy_path, "a policy name");
        if (limit.policy == no_policy) {
            fail(policy_path,
                 "\"none\" cannot be one of several limits; write policy: none for the route");
        }
        if (reg.find(limit.policy) == nullptr) {
            fail(policy_path, quote(limit.policy) + " is not a defined policy");
        }
        // One key per (policy, tenant): a policy twice would make the two limits one key.
        for (std::size_t j = 0; j < r.limits.size(); ++j) {
            if (r.limits[j].policy == limit.policy) {
                fail(policy_path, quote(limit.policy) + " is already " + join("limits", j) +
                                      "; a policy may appear once per route");
            }
        }

        if (const Json* id = find(item, "identity")) {
            const std::string id_path = join(limit_path, "identity");
            std::string name = need_string(*id, id_path, "the name of an identity source");
            bool known = name == client_ip_identity;
            std::string names = client_ip_identity;
            for (const auto& src : reg.identity) {
                if (src.name.empty() || src.name == client_ip_identity) continue;
                known = known || src.name == name;
                names += ", " + src.name;
            }
            if (!known) {
                fail(id_path, quote(name) + " is not the name of an identity source (known: " +
                                  names + ")");
            }
            limit.identity = std::move(name);
        }
        r.limits.push_back(std::move(limit));
    }
    r.policy = r.limits.front().policy;
}

}  // namespace ratelimitd::policy
