// The limits of a registry: `policies`, and the numbers `plans` and `tenants` give them.
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <map>
#include <string>

namespace ratelimitd::policy {

class LimitsSection : SchemaChecks {
public:
    using SchemaChecks::SchemaChecks;

    /// `policies` (required, at least one) into reg.policies.
    void read_policies(const ConfigTree& root, Registry& reg) const;
    /// `plans` into reg.plans; every policy a plan names is defined.
    void read_plans(const ConfigTree& v, Registry& reg) const;
    /// `tenants` into reg.tenants; plans are read first.
    void read_tenants(const ConfigTree& v, Registry& reg) const;

private:
    using Json = ConfigTree;

    Policy read_policy(const std::string& name, const Json& body, const std::string& path) const;
    /// `algorithm:` (required), one of the names of algorithm_table.
    Algorithm read_algorithm(const Json& body, const std::string& path) const;
    /// limit/window/burst (window_limits.hpp), a `windows:` list of them, or limit/lease for an
    /// algorithm holding leases (lease_limits.hpp), into `p` (whose algorithm is set).
    void read_limits(const Json& body, const std::string& path, Policy& p) const;
    /// One item of `windows:` (p's windows so far are before it): its numbers and IETF name,
    /// span and name distinct from the earlier ones.
    Policy read_window_item(const Json& item, const std::string& item_path, const Policy& p) const;
    /// Windows over a day need `long_ttl: true`: their keys outlive a day.
    void check_long_windows(const Policy& p, const std::string& path) const;
    /// {policy: limits} of a plan or of a tenant's overrides, each policy defined.
    std::map<std::string, Policy, std::less<>> read_variants(const Json& body, const std::string& path,
                                                             const std::string& label, const Registry& reg) const;
    /// A plan's or a tenant's limits for `base`: its numbers, everything else inherited.
    Policy read_variant(const Policy& base, const std::string& label, const Json& body,
                        const std::string& path) const;
};

}  // namespace ratelimitd::policy
