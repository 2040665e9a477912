// The one place that knows how Redis keys are laid out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// Returns "<prefix>:<policy>:<tenant>:<scope>", e.g. "rl:api-default:tenant_8231:global".
///
/// The key is unambiguous although tenants may contain ':' (e.g. "ip:2001:db8::1"): policy
/// names hold no ':' and scopes hold no ':', so the first ':' after the prefix ends the
/// policy and the last ':' starts the scope. Inputs must have passed validate_tenant /
/// validate_scope / is_valid_policy_name; the prefix is validated at config load.
///
/// The scope is the one free-form part (printable ASCII, contract §2): it is written with '{',
/// '}' and '%' as %7B, %7D and %25, so that a scope such as "{x}" is never a Redis Cluster hash
/// tag (which would put every tenant's key of that scope on one slot) and two scopes never
/// share a key. Tenants, policy names and the prefix hold none of these bytes.
///
/// One key per (policy, tenant, scope), whatever the algorithm; the script that writes it
/// sets its TTL, no longer than its state is useful (README "Keys"): token bucket until the
/// bucket is full again; GCRA until the TAT is past; sliding log and fixed window one window;
/// sliding window counter until the end of the window after the current one (two at most).
[[nodiscard]] std::string make_key(std::string_view prefix, std::string_view policy,
                                   std::string_view tenant, std::string_view scope);

/// The key of one window of a multi-window policy:
/// "<prefix>:<policy>:{<tenant>:<scope>}:<span>", e.g. "rl:api-tiered:{tenant_8231:global}:1d".
///
/// The braces are a Redis Cluster hash tag: every window key of one check hashes to the same
/// slot, so the one script that decides them all is valid on a cluster. Tenants hold no '{'
/// or '}' and the scope is escaped as in make_key, so the tag is exactly "<tenant>:<scope>";
/// `span` is the window's format_duration().
[[nodiscard]] std::string make_window_key(std::string_view prefix, std::string_view policy,
                                          std::string_view tenant, std::string_view scope,
                                          std::string_view span);

/// The key prefix of a calendar-aligned window (`align: calendar`):
/// "<prefix>:<policy>:{<tenant>:<scope>}:<span>@", e.g. "rl:api-monthly:{t1:global}:1mo@".
/// The store counts each period in the key calendar_period_key makes of it (lua/fixed_window.lua
/// appends the same digits from Redis TIME), so no count carries over into the next period;
/// the hash tag keeps every period's key in the prefix's Redis Cluster slot. `span` is the
/// calendar unit ("1mo"): it tells the windows of a multi-window policy apart.
[[nodiscard]] std::string make_calendar_key(std::string_view prefix, std::string_view policy,
                                            std::string_view tenant, std::string_view scope,
                                            std::string_view span);

/// The key of the period starting at `period_start_ms` (epoch ms): the calendar prefix, then
/// the start in epoch seconds, e.g. "rl:api-monthly:{t1:global}:1mo@1796083200".
[[nodiscard]] std::string calendar_period_key(std::string_view calendar_key, std::int64_t period_start_ms);

}  // namespace ratelimitd::policy
