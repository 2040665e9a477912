// The route table of a registry: `routes`, each with its path, method, policy or limits, scope.
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <string>

namespace ratelimitd::policy {

class RoutesSection : SchemaChecks {
public:
    using SchemaChecks::SchemaChecks;

    /// `routes` into reg.routes; policies and identity sources are read first.
    /// `case_insensitive` is the top-level default of the routes' own setting.
    void read_routes(const ConfigTree& v, Registry& reg, bool case_insensitive) const;

private:
    using Json = ConfigTree;

    /// A route's path: starting with '/', '*' only at the end, already normalised.
    std::string read_route_path(const Json& item, const std::string& path) const;
    /// A route's method, upper-cased: letters only.
    std::string read_route_method(const Json& m, const std::string& method_path) const;
    void read_route_limits(const Json& v, const std::string& path, const Registry& reg, Route& r) const;
};

}  // namespace ratelimitd::policy
