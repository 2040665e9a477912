// What the planner made of an Envoy rate limit service call: one CheckPlan for the whole
// call (decided as one, all-or-nothing), and for each descriptor, in request order, what
// its status in the answer reports.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/check_plan.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::policy {

struct RlsRule;

/// envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit, same numbers (and those of
/// envoy.type.v3.RateLimitUnit, which a descriptor's `limit` override carries): WEEK came last,
/// so it is 7, after YEAR, as in Envoy's API and envoyproxy/ratelimit's config proto.
enum class RlsUnit : int { unknown = 0, second = 1, minute = 2, hour = 3, day = 4, month = 5, year = 6, week = 7 };

/// One descriptor of the call.
struct RlsDescriptorPlan {
    enum class Kind {
        no_match,   ///< no rule of the domain matches: OK, no limit reported
        unlimited,  ///< the matching rule says `unlimited: true`: OK, no limit reported
        limited     ///< decided by CheckPlan::limits[limit]
    };
    Kind kind = Kind::no_match;
    std::size_t limit = 0;  ///< index into RlsPlan::check.limits, for Kind::limited
    /// A bounded metric label: the matched rule's path in the config ("domain.key_value.key"),
    /// never a value the caller sent for a key the config gives no value.
    std::string label;
    // current_limit of the answer, for Kind::limited:
    std::string name;                    ///< rate_limit.name ("" when the config names none)
    std::uint32_t requests_per_unit = 0;
    RlsUnit unit = RlsUnit::unknown;
    /// For a window aligned to the unit (fixed_window, the default): when it ends, in epoch
    /// seconds, as envoyproxy/ratelimit computes duration_until_reset (the store's own reset
    /// counts from the window's first hit, which may be later); 0 for the other algorithms.
    std::int64_t window_end_s = 0;
    /// `detailed_metric: true`: the rule's label with the descriptor's last value added, as
    /// envoyproxy/ratelimit names such stats (unbounded by the operator's choice); else "".
    std::string detailed_label;
    /// Kind::limited by a rule: that rule (its registry snapshot is the plan's, held by
    /// RlsPlan::check), for the stats that name it; nullptr for a descriptor's own limit.
    const RlsRule* rule = nullptr;
    /// Kind::limited: the cost the call asks of its (enforced) limit is more than the limit can
    /// ever admit, so the call is denied without asking the store.
    bool never_admitted = false;
};

/// The metric label of every descriptor of a call to a domain no config names: fixed, so the
/// caller's domain never becomes a label; "(" and " " are escaped in every configured label.
inline constexpr const char* unknown_domain_label = "(unknown domain)";

/// What one call may hold; more is an invalid_request naming the bound. Only the proxy's own
/// config shapes these (how many rate_limits a route has, an action's descriptor_key); what
/// its clients shape (values, entry counts, hits, limit overrides) has no bound here.
namespace rls_bounds {
inline constexpr std::size_t max_descriptors = 64;
inline constexpr std::size_t max_key_bytes = 1024;     ///< an entry's key
}  // namespace rls_bounds

/// A planned ShouldRateLimit call.
struct RlsPlan {
    CheckPlan check;                            ///< every limited descriptor's limit, deduplicated by key
    std::vector<RlsDescriptorPlan> descriptors; ///< one per request descriptor, in order
    /// Some descriptor is never_admitted: the call is OVER_LIMIT and charges nothing.
    bool never_admitted = false;
    /// envoy_shadow_mode: counted and decided as ever, but the call answers OK overall (its
    /// descriptors still say OVER_LIMIT), as envoyproxy/ratelimit's SHADOW_MODE answers.
    bool shadow_all = false;
    /// The limits of descriptors that sent their own (RlsDescriptor::limit): made for this
    /// call, kept here (on the heap, so moving the plan keeps check's pointers valid).
    std::vector<std::unique_ptr<const Policy>> override_policies;
};

/// Plans a ShouldRateLimit call on the registry's `domains` (docs/envoy-config.md): an
/// empty domain, no descriptors, a descriptor without entries, an empty key, or more than
/// rls_bounds allow are Problems (invalid_request) naming what was wrong (each is the proxy's
/// doing, never its client's); an unknown domain limits nothing. Values are taken as given
/// (decoders bound them first, rls_value.hpp); a descriptor with more entries than any rule
/// nests matches none. A cost an enforced limit can never admit (more than its max_cost or than
/// check::max_cost, 2^64-1 included) is no error but a denial: that descriptor is
/// never_admitted, and so is the plan; a shadow limit is charged at most what it can admit.
/// hits_addend 0 on the request means 1; a descriptor's
/// own hits_addend, when set, replaces the request's for that descriptor, and 0 there asks
/// without charging (PlannedLimit::check_only: over the limit once nothing is left).
/// Descriptors whose counters share a key become one limit charged their summed cost.
/// A descriptor that sends its own limit (RlsDescriptor::limit) is decided by it, as
/// envoyproxy/ratelimit decides it: whatever rule it matches or not (none, unlimited, another
/// limit), a fixed window of that many per unit aligned to the unit, never shadow, unnamed,
/// replacing nothing and never replaced, counted per domain, entry keys and values (the
/// same counter whatever the limit sent), any requests_per_unit up to UINT32_MAX; an unknown
/// unit (outside 1..7, which Envoy never sends) is an invalid_request naming the field.
result<RlsPlan> plan(std::shared_ptr<const Registry> registry, const RlsRequest& req);

/// The same at `now` (the clock that places aligned windows), for tests.
result<RlsPlan> plan(std::shared_ptr<const Registry> registry, const RlsRequest& req,
                     std::chrono::system_clock::time_point now);

/// The same with the process's envoy_key_layout: with `keys.erl`, a descriptor counted in a
/// window aligned to its unit (a rule's default fixed window, or its own limit) is counted on
/// envoyproxy/ratelimit's key (erl_counter.hpp) as its pods count: any hits_addend is charged
/// (none is never_admitted), each limit's Part follows envoy_denied_calls, and the plan is
/// decided in one store call (CheckPlan::single_call).
result<RlsPlan> plan(std::shared_ptr<const Registry> registry, const RlsRequest& req, const EnvoyKeys& keys);

/// The same at `now`, for tests.
result<RlsPlan> plan(std::shared_ptr<const Registry> registry, const RlsRequest& req, const EnvoyKeys& keys,
                     std::chrono::system_clock::time_point now);

}  // namespace ratelimitd::policy
