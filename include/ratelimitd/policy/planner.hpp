// The one planner: a request and a registry snapshot in, the limits to decide out. Pure (no
// I/O, no clock); /v1/check, /v1/auth and the admin endpoints all plan here.
#pragma once

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/check_plan.hpp"
#include "ratelimitd/policy/identity.hpp"

#include <memory>
#include <string_view>

namespace ratelimitd::policy {

/// What a reverse proxy asks about on /v1/auth. Borrows everything.
struct AuthRequest {
    std::string_view method;         ///< the original request's method
    std::string_view uri;            ///< the original request's path and query
    const IdentityInput& identity;   ///< its headers and peer
    std::string_view hash_secret;    ///< key for hashed identities (effective_hash_secret)
};

/// Plans a /v1/check: validates tenant, scope and plan name, then cost (1..1000000);
/// resolves the policy (policy::resolve); a layered route gives one limit per route limit,
/// all with the request's tenant. Each limit gets the tenant's override or plan
/// (limits_for; unknown_plan when `req.plan` is not defined), must admit `req.cost`
/// (invalid_cost naming the policy) and gets its keys. A `policy: none` route plans no limit.
/// Client mistakes come back as Problems, in that order. Never throws but for bad_alloc.
result<CheckPlan> plan(std::shared_ptr<const Registry> registry, const check::CheckRequest& req);

/// plan(CheckRequest) written into `out`, a fresh CheckPlan (default-constructed), rather
/// than returned: the road's call owns its plan, and the check's hot path moves none. On a
/// Problem `out` may hold part of a plan: the caller drops it.
result<void> plan_into(std::shared_ptr<const Registry> registry, const check::CheckRequest& req, CheckPlan& out);

/// Plans a /v1/auth subrequest for cost 1: the first route matching the original method and
/// URI (its `limits`, each with the tenant its identity source names), else default_policy
/// for the identity sources in order, else no limit. A `policy: none` route plans no limit.
result<CheckPlan> plan(std::shared_ptr<const Registry> registry, const AuthRequest& req);

/// plan(AuthRequest) past its first step: `route` is what match_route(*registry, req.method,
/// req.uri) found (nullptr: none), for a caller that remembers the routes of the paths it has
/// seen (ratelimitd simulate).
result<CheckPlan> plan_matched(std::shared_ptr<const Registry> registry, const Route* route, const AuthRequest& req);

/// Plans the key an admin peek or reset names: as plan(CheckRequest) for cost 1 and the
/// resolved policy alone (a layered route's first), without the cost checks; a request that
/// resolves to `policy: none` fails with unknown_policy (it keeps no state).
result<CheckPlan> plan_state(std::shared_ptr<const Registry> registry, const check::CheckRequest& req);

}  // namespace ratelimitd::policy
