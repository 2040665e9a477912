// Quota webhooks on Envoy domain rules: `notify.policies` may name a rule of `domains:` /
// `envoy_config:` by its label ("llm.tokens", as its stats name it), so that the calls of
// Envoy's rate limit service (a response phase's hits_addend, ERL mode's counters) cross
// thresholds as checks and reports do.
#pragma once

#include "ratelimitd/policy/notify_rule.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <memory>
#include <string_view>

namespace ratelimitd::policy {

/// Hangs `rule` on every limited rule of `domains` labelled `label` (at any depth); false when
/// none is.
bool attach_notify_to_domain_rules(RlsDomains& domains, std::string_view label,
                                   const std::shared_ptr<const NotifyRule>& rule);

/// `domains` (from an xDS control plane) with the thresholds `settings` keeps for their labels
/// hung on the rules so labelled: a copy when any is, else `domains` itself.
[[nodiscard]] std::shared_ptr<const RlsDomains> with_xds_thresholds(std::shared_ptr<const RlsDomains> domains,
                                                                   const NotifySettings* settings);

/// The deepest debt a report can leave on the rules labelled `label` (their max_debt), 0 when
/// none is.
[[nodiscard]] std::int64_t deepest_debt_of_domain_rules(const RlsDomains& domains, std::string_view label);

}  // namespace ratelimitd::policy
