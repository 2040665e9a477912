// Reads one envoyproxy/ratelimit config document ({domain, descriptors}) into an RlsDomain,
// checked field by field like the rest of the registry: every mistake is a ConfigError
// "<file>: <field path>: <what was expected>" (docs/envoy-config.md lists every key).
#pragma once

#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <cstddef>
#include <string>

namespace ratelimitd::policy {

namespace envoy_bounds {
inline constexpr std::size_t max_depth = 16;           ///< nested `descriptors:` levels
inline constexpr std::size_t max_part_bytes = 1024;    ///< a domain, a key, a value
inline constexpr std::int64_t max_requests_per_unit = 1'000'000'000;
}  // namespace envoy_bounds

class EnvoyDomainReader : SchemaChecks {
public:
    using SchemaChecks::SchemaChecks;

    /// The document at `path` ("" for a file of its own, "domains[0]" inside the registry).
    RlsDomain read(const ConfigTree& doc, const std::string& path) const;

    /// envoyproxy/ratelimit's MERGE_DOMAIN_CONFIG: the top-level rules of `more` (read from this
    /// reader's file) appended to `into`, the same domain read earlier. A key and value `into`
    /// already has is an error, as it is within one file.
    void merge(RlsDomain& into, RlsDomain more) const;

private:
    using Json = ConfigTree;
    /// The label and key name of the rule a level hangs from (the domain's at the top).
    struct RulePath {
        std::string label;
        std::string key_name;
    };

    void read_level(const Json& list, const std::string& path, const RulePath& parent, std::size_t depth,
                    RlsLevel& level) const;
    RlsRule read_rule(const Json& item, const std::string& path, const RulePath& parent, std::size_t depth) const;
    /// `share_threshold`: `true` only on a wildcard rule (envoyproxy/ratelimit's refusal).
    void read_share_threshold(const Json& item, const std::string& path, RlsRule& rule) const;
    /// `key` and `value` (strings; numbers and booleans as YAML writes them) into `rule`.
    void read_match(const Json& item, const std::string& path, RlsRule& rule) const;
    void read_rate_limit(const Json& v, const std::string& path, RlsRule& rule) const;
    void read_replaces(const Json& v, const std::string& path, RlsRule& rule) const;
    /// ratelimitd's own keys (`algorithm`, `on_store_error`) and the Policy they make.
    void build_policy(const Json& item, const std::string& path, RlsRule& rule) const;
    void check_exactness(const Policy& p, const std::string& path) const;
    /// Adds the rule at `index` of `level` to its lookup tables; a second rule with the same
    /// key and value is an error.
    void index_rule(RlsLevel& level, std::size_t index, const std::string& list_path) const;
    /// A scalar as text: a string as is, an integer or a boolean as YAML writes it.
    std::string scalar_text(const Json& v, const std::string& path, const std::string& what) const;
};

}  // namespace ratelimitd::policy
