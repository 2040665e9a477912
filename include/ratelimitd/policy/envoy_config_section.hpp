// The registry's Envoy rate limit service rules: its `domains:` list, and the envoyproxy/
// ratelimit files `envoy_config:` names (one file, or every *.yaml / *.yml of a directory).
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <cstddef>
#include <string>

namespace ratelimitd::policy {

namespace envoy_bounds {
inline constexpr std::size_t max_files = 1000;  ///< files of an envoy_config directory
}  // namespace envoy_bounds

class EnvoyConfigSection : SchemaChecks {
public:
    using SchemaChecks::SchemaChecks;

    /// Whether the root has either key (the registry then needs no `policies`).
    static bool present(const ConfigTree& root);

    /// `domains` and `envoy_config` into reg.domains (left null when neither is set), with
    /// `envoy_denied_calls` (refuse | charge; an error without either). `envoy_config` is a
    /// file, a directory, or a list of files (ERL mode's runtime directory). A domain defined
    /// twice, in the registry or across files, is an error, unless `envoy_merge_domains: true`
    /// (envoyproxy/ratelimit's MERGE_DOMAIN_CONFIG) merges the files' rules of one domain.
    /// `rules_from_xds`: the domains come from xds_server, so envoy_denied_calls alone is kept
    /// in reg.xds_charge_denied for them (XdsSource applies it).
    void read(const ConfigTree& root, Registry& reg, bool rules_from_xds = false);

private:
    void read_inline(const ConfigTree& list, RlsDomains& out) const;
    void read_files(const ConfigTree& v, RlsDomains& out) const;
    /// The files `path` names: itself, or the sorted *.yaml / *.yml files of the directory.
    std::vector<std::string> list_files(const std::string& path) const;
    void read_file(const std::string& name, RlsDomains& out) const;
    void add(RlsDomain domain, const std::string& file, const std::string& path, RlsDomains& out) const;

    bool merge_domains_ = false;  // set by read() from envoy_merge_domains
};

}  // namespace ratelimitd::policy
