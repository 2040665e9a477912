// The one place that knows how Redis keys are laid out.
#pragma once

#include <string>
#include <string_view>

namespace ratelimitd::check {

/// Returns "<prefix>:<policy>:<tenant>:<scope>", e.g. "rl:api-default:tenant_8231:global".
///
/// The key is unambiguous although tenants may contain ':' (e.g. "ip:2001:db8::1"): policy
/// names hold no ':' and scopes hold no ':', so the first ':' after the prefix ends the
/// policy and the last ':' starts the scope. Inputs must have passed validate_tenant /
/// validate_scope / is_valid_policy_name; the prefix is validated at config load.
///
/// One key per (policy, tenant, scope), whatever the algorithm; the script that writes it
/// sets its TTL, no longer than its state is useful (README "Keys"): token bucket until the
/// bucket is full again; GCRA until the TAT is past; sliding log and fixed window one window;
/// sliding window counter until the end of the window after the current one (two at most).
[[nodiscard]] std::string make_key(std::string_view prefix, std::string_view policy,
                                   std::string_view tenant, std::string_view scope);

}  // namespace ratelimitd::check
