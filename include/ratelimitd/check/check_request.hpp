// What a caller asks: may this tenant spend `cost` units of a policy on a scope now?
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ratelimitd::check {

/// A parsed, not yet validated check. Fields the caller left out stay empty, so that policy
/// resolution can tell "absent" from "given".
struct CheckRequest {
    std::optional<std::string> policy;  ///< policy name; absent: resolve from method+path
    std::string tenant;                 ///< who is limited (an id, never a secret)
    std::optional<std::string> scope;   ///< what is limited; absent: route scope, else "global"
    std::uint32_t cost = 1;             ///< units this request uses, 1..max_cost
    std::optional<std::string> method;  ///< only for route-based resolution
    std::optional<std::string> path;    ///< only for route-based resolution
    /// The caller's plan for this tenant (e.g. "pro"); absent: the registry's tenant map.
    std::optional<std::string> plan;
};

/// Largest cost a single check may carry (docs/api.md).
inline constexpr std::uint32_t max_cost = 1'000'000;

}  // namespace ratelimitd::check
