// What the planner decided a check is: the limits it falls under, with their keys.
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/tenant_text.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace ratelimitd::policy {

/// One window the store decides: a single-window policy itself, or one window of a
/// multi-window policy, with the key it keeps its state under.
struct KeyedWindow {
    const Policy* limit = nullptr;  ///< points into CheckPlan::registry
    std::string key;                ///< policy::make_key / policy::make_window_key
};

/// The windows of one limit: most policies have one, kept inline so that planning a check
/// allocates nothing for it.
using KeyedWindows = boost::container::small_vector<KeyedWindow, 1>;

/// How one limit takes part in a decision of several (Store::apply_all).
enum class Part : std::uint8_t {
    /// Admits its cost or denies; charged only when every `decide` and `ask` limit admits.
    decide,
    /// Cost 0: admits while at least one unit is left, never charged (an Envoy descriptor's own
    /// hits_addend 0 in ratelimitd's accounting).
    ask,
    /// Charged its cost whatever the others do, its own verdict standing (envoyproxy/ratelimit's
    /// accounting of a call, STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=false).
    charge,
};

/// One limit of a check: a policy with the tenant's plan or override applied, and the
/// tenant whose budget it spends.
struct PlannedLimit {
    const Policy* policy = nullptr;    ///< points into CheckPlan::registry
    TenantText tenant;                 ///< valid for /v1/check; as identified for /v1/auth
    KeyedWindows windows;              ///< one per window of `policy`, in its order
    /// Units this limit spends when it is not the check's (an Envoy descriptor's own
    /// hits_addend); 0: CheckPlan::cost.
    std::uint32_t cost = 0;
    /// Asked, never charged (an Envoy descriptor whose own hits_addend is 0): the limit denies
    /// the check when nothing of it is left, else admits, and spends nothing either way. It is
    /// read on its own before the charged limits are decided (a read needs no atomicity).
    bool check_only = false;
    /// How the store decides it beside the others: ask for a check_only limit in ratelimitd's
    /// accounting, else decide; every limit of an envoyproxy/ratelimit call under
    /// envoy_denied_calls: charge is charge.
    Part part = Part::decide;

    /// envoyproxy/ratelimit's quota_mode (or its QUOTA_MODE): counted and decided as an
    /// enforced limit, but the store's verdict never denies on it; whether the call is over
    /// is the answer's to say (every quota descriptor over, rls::build_response).
    bool quota = false;

    /// The window its key names, when the key carries one (an Envoy domain rule's fixed window
    /// aligned to its unit, with either key layout): its end in epoch ms, by the clock the key
    /// was cut from. The counter lives in that key only while the window lasts, so a quota
    /// webhook event names this window, not the counter's TTL (which runs from its first
    /// charge). 0: the store's reply says where the window ends. Epoch seconds in 32 bits (they
    /// last to 2106): with Part in a byte the limit stays the size it was, so the frame of a
    /// waiting call stays in the size class the thread's FramePool recycles (road.hpp).
    std::uint32_t window_end_s = 0;

    /// Evaluated and counted, but never denies the store's verdict (Policy::shadow, or quota).
    [[nodiscard]] bool shadow() const noexcept { return policy->shadow || quota; }
    /// A store failure denies rather than allows (on_store_error: deny).
    [[nodiscard]] bool fail_closed() const noexcept { return policy->on_store_error == OnStoreError::deny; }
};

/// The limits of a check: one for most checks (inline), more for a layered route.
using PlannedLimits = boost::container::small_vector<PlannedLimit, 1>;

/// What the store does with a plan's limits: decide a check, or charge a report (POST
/// /v1/report: charged without asking, into debt if need be; a negative cost refunds).
enum class Mode { check, report };

/// A check ready to decide: everything the service needs, and nothing it has to look up.
/// Built only by policy::plan, so it has passed validation (tenant, scope, plan, cost).
struct CheckPlan {
    /// The snapshot the plan was made on: keeps every pointer above alive, so that a reload
    /// cannot change a check half-way.
    std::shared_ptr<const Registry> registry;
    PlannedLimits limits;              ///< empty: not limited (a `policy: none` route, ...)
    std::string tenant;                ///< reported when not limited (the request's; "" on /v1/auth)
    std::string scope;                 ///< request scope, else route scope, else "global"
    std::uint32_t cost = 1;            ///< units each limit spends, within every limit's max_cost
    Mode mode = Mode::check;           ///< set by policy::plan_report for a report
    std::int64_t report_cost = 0;      ///< a report's signed units, charged to every limit
    /// /v1/auth only: no route matched and no default_policy is set, so nothing limits it
    /// (unlike a `policy: none` route, which says so); counted, and warned about at start.
    bool unmatched = false;
    /// Every limit, shadow ones included, is decided in one store call, and only the enforced
    /// ones deny: envoyproxy/ratelimit's accounting (envoy_key_layout: envoyproxy-ratelimit),
    /// where a shadow limit's count takes part in the call as any other.
    bool single_call = false;
    /// How the caller answers a store failure (the Envoy door's envoy_store_error): the store
    /// failure's log line names that answer, not the limits' on_store_error it overrides.
    RlsStoreError store_failure = RlsStoreError::on_store_error;
};

}  // namespace ratelimitd::policy
