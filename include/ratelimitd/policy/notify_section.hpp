// `notify:` of a config file: webhook targets and the thresholds per policy (docs/operations.md).
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

namespace ratelimitd::policy {

/// Reads `notify:` into reg.notify and sets Policy::notify on every version of each named
/// policy (its own, its plans', its tenants' overrides, and their windows); policies, plans and
/// tenants are read first. Refuses what the sender cannot honour, naming the field: a URL that
/// is not http:// or https://, a ca_file that cannot be read or is not for https://, a secret shorter than 16
/// bytes (never echoed), a threshold outside (0, 1], a debt bound that is not a whole number
/// from 1 to the policy's max_debt, a rule with neither `at` nor `debt`, an undefined target or
/// policy, a concurrency policy (it has no window to count a crossing in).
class NotifySection : SchemaChecks {
public:
    using SchemaChecks::SchemaChecks;

    /// `domain_rules_follow`: the file has Envoy domains, read after this; a name that is no
    /// policy may be one of their rules' labels, which read_domain_rules then decides.
    void read(const ConfigTree& v, Registry& reg, bool domain_rules_follow = false, bool rules_from_xds = false) const;

    /// The `notify.policies` entries naming no policy: each hung on the limited domain rules
    /// of that label (policy/notify_domain_rules.hpp), or refused. After read() and the domains.
    void read_domain_rules(const ConfigTree& v, Registry& reg) const;

private:
    std::shared_ptr<const NotifyTarget> read_target(const ConfigTree& v, const std::string& path,
                                                    const std::string& name) const;
    void read_url(const ConfigTree& v, const std::string& path, NotifyTarget& t) const;
    /// `deepest_debt`: the largest debt a report can leave on the policy (its max_debt).
    std::shared_ptr<const NotifyRule> read_rule(const ConfigTree& v, const std::string& path, const std::string& name,
                                                const NotifySettings& settings, std::int64_t deepest_debt) const;
    /// `at:`, into rule.at: 1 to max_notify_thresholds distinct fractions in (0, 1].
    void read_thresholds(const ConfigTree& v, const std::string& path, NotifyRule& rule) const;
    /// `debt:`: a whole number from 1 to `deepest` (a larger bound could never be passed).
    std::int64_t read_debt(const ConfigTree& v, const std::string& path, std::int64_t deepest) const;
};

}  // namespace ratelimitd::policy
