// GET /v1/top: the heavy hitters, per policy, as JSON (an admin endpoint).
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/http/types.hpp"
#include "ratelimitd/service/thread_top.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::http {

/// The parameters of GET /v1/top, validated.
struct TopQuery {
    std::optional<std::string> policy;  ///< absent: every policy with entries
    service::TopBy by = service::TopBy::denied;
    std::size_t n = 10;
    /// The quota service's buckets instead of policies' tenants: of this domain of `rlqs:`,
    /// and of its `rule` alone when set; ranked by denied or (by=demand) allowed + denied.
    std::optional<std::string> rlqs;
    std::optional<std::string> rule;
    bool demand = false;  ///< by=demand (rlqs only)
};

/// Parses `policy=&by=denied|admitted&n=`, or `rlqs=&rule=&by=denied|demand&n=`
/// (percent-encoded, each at most once, no others); n must be 1..`k`. A bad one is an
/// invalid_request Problem naming the parameter.
result<TopQuery> parse_top_query(std::string_view query, std::size_t k);

// Its handler (handlers::top) answers {"by":...,"window_seconds":...,"k":...,"policies":
// [{"policy":...,"tenants":[{"tenant":...,"count":...,"error":...}]}]}; 400 on bad parameters
// or an unknown policy, 404 when the heavy hitters are off (top_k = 0). With rlqs=:
// {"by":...,"window_seconds":...,"k":...,"rlqs":[{"domain":...,"rule":...,"buckets":
// [{"bucket":...,"count":...,"error":...}]}]}; 400 unknown_policy for a domain or rule not in rlqs:.

}  // namespace ratelimitd::http
