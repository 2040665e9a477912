// What the planner made of an Envoy rate limit service call: one CheckPlan for the whole
// call (decided as one, all-or-nothing), and for each descriptor, in request order, what
// its status in the answer reports.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/check_plan.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::policy {

/// envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit, same numbers (check the
/// published proto for units added since, e.g. WEEK).
enum class RlsUnit : int { unknown = 0, second = 1, minute = 2, hour = 3, day = 4, month = 5, year = 6 };

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
};

/// A planned ShouldRateLimit call.
struct RlsPlan {
    CheckPlan check;                            ///< every limited descriptor's limit, deduplicated by key
    std::vector<RlsDescriptorPlan> descriptors; ///< one per request descriptor, in order
};

/// Plans a ShouldRateLimit call on the registry's `domains` (see registry docs): unknown
/// domain, empty descriptors or a cost out of range are Problems naming what was wrong.
result<RlsPlan> plan(std::shared_ptr<const Registry> registry, const RlsRequest& req);

}  // namespace ratelimitd::policy
