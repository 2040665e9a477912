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
/// The scope is the one free-form part (printable ASCII, docs/api.md): it is written with '{',
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
/// `part` (a domain, a descriptor key or value: arbitrary bytes) written with only bytes that
/// are safe everywhere a key or a metric label goes: A-Z, a-z, 0-9 and "-*/+=@,~!" as they
/// are, every other byte as %XX (upper-case hex). So '.', '_' and ':' (the separators of the
/// key and of rule labels), '{' and '}' (Redis Cluster hash tags), '%' itself, quotes,
/// spaces and control bytes never appear raw, and two parts never escape alike.
[[nodiscard]] std::string escape_key_part(std::string_view part);

/// The key of one Envoy descriptor's counter:
/// "<prefix>:envoy/<rule>:<values>" or, for a window aligned to the unit,
/// "<prefix>:envoy/<rule>:<values>:<window start, epoch seconds>", e.g.
/// "rl:envoy/edge.remote_address:10.0.0.1:1764590400".
///
/// `rule` is the matched rule's key name (rls_domain.hpp: escaped parts joined by '.' and '_'),
/// `values` the descriptor's values (escaped, joined by '.', or "%h" + SHA-256 hex when long,
/// see rls_key_values). "envoy/" holds a '/', which no policy name has, so no key of
/// /v1/check ever equals one of these. Neither part holds ':', '{' or '}': the key has no hash
/// tag, each descriptor's counter hashes to its own Redis Cluster slot.
[[nodiscard]] std::string make_descriptor_key(std::string_view prefix, std::string_view rule,
                                              std::string_view values, std::int64_t window_start_s = -1);

}  // namespace ratelimitd::policy
