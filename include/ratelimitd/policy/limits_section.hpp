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
    /// `algorithm:` (required), one of policy::algorithm_names.
    Algorithm read_algorithm(const Json& body, const std::string& path) const;
    /// limit/window/burst, or a `windows:` list, into `p` (whose algorithm is set).
    void read_limits(const Json& body, const std::string& path, Policy& p) const;
    /// One item of `windows:` (p's windows so far are before it): its numbers and IETF name,
    /// span and name distinct from the earlier ones.
    Policy read_window_item(const Json& item, const std::string& item_path, const Policy& p) const;
    void read_window(const Json& body, const std::string& path, Policy& p) const;
    /// Refuses a `max_debt` beyond max_debt_windows x limit, or one the scripts could not
    /// count exactly; `path` is the policy's or the window's.
    void check_max_debt(const Policy& p, const std::string& path) const;
    /// `align:` and `utc_offset:` of `body` into p.calendar (a placeholder unit until the
    /// window is read) and p.utc_offset_minutes; absent: what `p` has (a window inherits its
    /// policy's). align: calendar only on fixed_window, utc_offset only with it.
    void read_alignment(const Json& body, const std::string& path, Policy& p) const;
    /// The `window:` of a calendar-aligned policy: one of 1m, 1h, 1d, 1w, 1mo, 1y.
    void read_calendar_window(const Json& window, const std::string& window_path, Policy& p) const;
    /// A concurrency policy's limit and `lease:` (lease_limits.cpp), instead of a window.
    void read_lease(const Json& body, const std::string& path, Policy& p) const;
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
