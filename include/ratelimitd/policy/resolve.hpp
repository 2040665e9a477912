// Picks the policy and scope a check applies to.
#pragma once

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/policy.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// The outcome of resolution: either a policy to apply, or "not limited" (policy: none).
struct Resolved {
    const Policy* policy = nullptr;  ///< nullptr: the route says "none"; points into the Registry
    /// Request scope, else route scope, else "global": a view into `req`, the Registry or a
    /// literal (a string of its own was built and moved on every check).
    std::string_view scope;
    const Route* route = nullptr;    ///< the route that decided, if any (its limits may be several)
};

/// Resolves in this order: the request's `policy`; else the first route matching
/// method + path; else the registry's default_policy. Fails with unknown_policy when the
/// name is not in the registry or nothing names a policy. Does not validate tenant, scope
/// or cost. The result points into `reg` and `req`, which must outlive it.
result<Resolved> resolve(const Registry& reg, const check::CheckRequest& req);

/// The limits `base` has for `tenant`: the tenant's own override when the registry has one;
/// else the plan's limits for `base`, the plan being `requested_plan` when given, else the
/// tenant's plan in the registry; else `base` itself (also when the plan does not list
/// `base`). Fails with unknown_plan when `requested_plan` is not defined. The result points
/// into `reg` (or is `&base`).
result<const Policy*> limits_for(const Registry& reg, const Policy& base, std::string_view tenant,
                                 const std::optional<std::string>& requested_plan);

/// The first route matching method + path, or nullptr. `path` is matched in normal form
/// (normalize_path: query cut, %XX decoded, dot segments, repeated slashes and ';' parameters
/// resolved), so every spelling of a path meets the same route. A route without a method
/// matches any method; a path ending in '*' matches every path starting with what precedes the
/// '*'; any other matches the path with or without a trailing slash; a case_insensitive route
/// matches letters in either case. When the normal form meets no route or a `policy: none`
/// one, the path as sent (path_as_sent: decoded, nothing resolved) is matched too and wins if
/// it meets a limited route: "/api/../health" stays under "/api/*", as a backend that does
/// not normalise would serve it, so a spelling never turns a limited path into an unlimited one.
const Route* match_route(const Registry& reg, std::string_view method, std::string_view path);
/// match_route of a path that is_normal_path: the first route matching it as it is.
const Route* match_normal_route(const Registry& reg, std::string_view method, std::string_view path);

}  // namespace ratelimitd::policy
