// `notify:` of a config file: webhook targets and the thresholds per policy (contract §13).
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

namespace ratelimitd::policy {

/// Reads `notify:` into reg.notify and sets Policy::notify on every version of each named
/// policy (its own, its plans', its tenants' overrides, and their windows); policies, plans and
/// tenants are read first. Refuses what the sender cannot honour, naming the field: a URL that
/// is not http:// (https:// included: the sender speaks plain HTTP), a secret shorter than 16
/// bytes (never echoed), a threshold outside (0, 1], an undefined target or policy, a
/// concurrency policy (it has no window to count a crossing in).
class NotifySection : SchemaChecks {
public:
    using SchemaChecks::SchemaChecks;

    void read(const ConfigTree& v, Registry& reg) const;

private:
    std::shared_ptr<const NotifyTarget> read_target(const ConfigTree& v, const std::string& path,
                                                    const std::string& name) const;
    void read_url(const ConfigTree& v, const std::string& path, NotifyTarget& t) const;
    std::shared_ptr<const NotifyRule> read_rule(const ConfigTree& v, const std::string& path, const std::string& name,
                                                const NotifySettings& settings) const;
};

}  // namespace ratelimitd::policy
