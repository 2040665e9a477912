// Quota webhooks hung on Envoy domain rules by their labels.
#include "ratelimitd/policy/notify_domain_rules.hpp"

#include <algorithm>

namespace ratelimitd::policy {

namespace {

/// Calls visit(rule) for every rule of `level` and of the levels below it.
template <class Level, class Visit>
void for_each_rule(Level& level, Visit& visit) {
    for (auto& rule : level.rules) {
        visit(rule);
        for_each_rule(rule.children, visit);
    }
}

template <class Domains, class Visit>
void for_each_labelled(Domains& domains, std::string_view label, Visit visit) {
    auto matching = [&](auto& rule) {
        if (rule.limit == RlsRule::Limit::limited && rule.label == label) visit(rule);
    };
    for (auto& [name, domain] : domains.by_name) for_each_rule(domain.root, matching);
}

}  // namespace

bool attach_notify_to_domain_rules(RlsDomains& domains, std::string_view label,
                                   const std::shared_ptr<const NotifyRule>& rule) {
    bool found = false;
    for_each_labelled(domains, label, [&](RlsRule& r) {
        r.policy.notify = rule;
        found = true;
    });
    return found;
}

std::shared_ptr<const RlsDomains> with_xds_thresholds(std::shared_ptr<const RlsDomains> domains,
                                                     const NotifySettings* settings) {
    if (domains == nullptr || settings == nullptr || settings->xds_labels.empty()) return domains;
    auto copy = std::make_shared<RlsDomains>(*domains);
    bool any = false;
    for (const auto& [label, rule] : settings->xds_labels) any = attach_notify_to_domain_rules(*copy, label, rule) || any;
    return any ? copy : domains;
}

std::int64_t deepest_debt_of_domain_rules(const RlsDomains& domains, std::string_view label) {
    std::int64_t deepest = 0;
    for_each_labelled(domains, label, [&](const RlsRule& r) { deepest = std::max(deepest, r.policy.debt_bound()); });
    return deepest;
}

}  // namespace ratelimitd::policy
