// Who a request is, for a registry: `identity` sources and `trusted_proxies`.
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <string>

namespace ratelimitd::policy {

class IdentitySection : SchemaChecks {
public:
    using SchemaChecks::SchemaChecks;

    /// `identity` into reg.identity (and reg.client_ip from the source named client_ip).
    void read_identity(const ConfigTree& v, Registry& reg) const;
    /// `trusted_proxies` into reg.trusted_proxies.
    void read_trusted_proxies(const ConfigTree& v, Registry& reg) const;

private:
    using Json = ConfigTree;

    /// A source's name (client_ip sources default to "client_ip"), unique in the list.
    void read_identity_name(const Json& item, const std::string& path, const Registry& reg,
                            IdentitySource& src) const;
    /// ipv4_prefix / ipv6_prefix of a client_ip source, each within client_ip_bounds.
    ClientIpPrefixes read_client_ip_prefixes(const Json& item, const std::string& path) const;
};

}  // namespace ratelimitd::policy
