// The Envoy rate limit service's rules as the registry holds them: one tree of descriptor
// rules per domain, read from envoyproxy/ratelimit's own config format (docs/envoy-config.md).
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/stat_slot.hpp"
#include "ratelimitd/policy/wildcard_pattern.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::policy {

struct RlsRule;

/// The rules of one level of a domain's tree, and the indexes the matcher looks them up by
/// (built by the reader; a rule's place in `rules` never changes once read).
struct RlsLevel {
    std::vector<RlsRule> rules;                             ///< in file order
    std::map<std::string, std::size_t, std::less<>> exact;  ///< RlsLevel::exact_index(key, value) -> rule
    std::vector<std::size_t> wildcards;                     ///< rules whose value holds a '*', in file order
    std::map<std::string, std::size_t, std::less<>> key_only;  ///< key -> the rule without a value

    /// The index key of an exact rule: the key's length, ':', the key, the value.
    static std::string exact_index(std::string_view key, std::string_view value);
};

/// One `descriptors:` item of an envoyproxy/ratelimit config.
struct RlsRule {
    std::string key;
    /// What `value` the rule has: none (each value counts on its own), exact, or a wildcard
    /// (a '*' anywhere: `value: "foo*"`, `"bar*b"`, `"foo*bar*baz"`; `wildcard` matches it).
    enum class ValueMatch { any, exact, wildcard };
    ValueMatch match = ValueMatch::any;
    std::string value;                        ///< as written (with its '*')
    std::optional<WildcardPattern> wildcard;  ///< ValueMatch::wildcard: the value as a pattern

    /// What `rate_limit` says: nothing (the rule only leads to deeper ones), a limit, or
    /// `unlimited: true`.
    enum class Limit { none, limited, unlimited };
    Limit limit = Limit::none;
    std::string limit_name;             ///< rate_limit.name ("" when unnamed)
    std::vector<std::string> replaces;  ///< rate_limit.replaces[].name
    RlsUnit unit = RlsUnit::unknown;
    std::uint32_t requests_per_unit = 0;
    bool detailed_metric = false;
    /// `quota_mode: true`: over its limit, the descriptor says OVER_LIMIT but denies the call
    /// only when every quota descriptor of the call is over too (envoyproxy/ratelimit's
    /// service); counted as any limit meanwhile.
    bool quota_mode = false;
    /// `value_to_metric: true`: envoyproxy/ratelimit names this level's stats with the value
    /// the caller sent; ratelimitd's metrics are per rule, so it names nothing here (kept so
    /// the config reads back as written).
    bool value_to_metric = false;
    /// `share_threshold: true` (a wildcard rule only): every value the wildcard matches counts
    /// on one counter, keyed by the pattern instead of the value (share_threshold_entries).
    bool share_threshold = false;
    /// The fixed window is aligned to the unit, as envoyproxy/ratelimit counts: its keys carry
    /// the window's start (the default, and `algorithm: fixed_window`).
    bool aligned = false;
    /// The limit the store decides (Limit::limited): named by `label`, shadow for
    /// `shadow_mode: true`; plans point at it.
    Policy policy;
    /// The bounded metric label (and Policy::name): the rule's path in the config as
    /// envoyproxy/ratelimit names its stats, "domain.key_value.key", each part escaped by
    /// escape_label_part. Readable, but "a_b" + "c" and "a" + "b_c" share one.
    std::string label;
    /// The policy part of the rule's keys: the same path with each part escaped by
    /// escape_key_part ('.' and '_' inside a part too), so no two rules share it.
    std::string key_name;
    /// ERL mode's stats of this rule (stats::ErlStats): found on its first counted call.
    StatSlot stats;

    RlsLevel children;  ///< the nested `descriptors:`
};

/// One `domain:` document.
struct RlsDomain {
    std::string name;
    std::string source_file;  ///< the file (or registry section) it was read from
    RlsLevel root;
    /// Some rule has share_threshold: calls must key their counters by share_threshold_entries.
    bool shares_threshold = false;
    /// Some rule has value_to_metric: ERL mode's stat names of this domain follow the values.
    bool values_in_stats = false;
};

/// Every domain of a registry, by name (Registry::domains).
struct RlsDomains {
    std::map<std::string, RlsDomain, std::less<>> by_name;
    /// The envoy_config files read, in order (the registry's own file for `domains:`).
    std::vector<std::string> files;
    /// `envoy_denied_calls: charge`: a call denied (OVER_LIMIT) is charged its cost anyway,
    /// as a report (into debt, at most the limit's debt bound), so response-phase costs are
    /// metered past the limit; `refuse` (the default): a denied call charges nothing.
    bool charge_denied = false;

    [[nodiscard]] const RlsDomain* find(std::string_view name) const {
        auto it = by_name.find(name);
        return it == by_name.end() ? nullptr : &it->second;
    }
};

/// The seconds of one unit, as envoyproxy/ratelimit divides time by them (a month is 30 days,
/// a year 365 days); 0 for unknown.
[[nodiscard]] std::int64_t unit_seconds(RlsUnit unit) noexcept;

/// `part` as a rule label writes it: printable ASCII as it is, but for '"', '\\' and '%',
/// which are %XX like every byte outside it, so a label is safe in metrics and logs.
[[nodiscard]] std::string escape_label_part(std::string_view part);

/// "second", "minute", ... as the config writes it.
[[nodiscard]] const char* to_string(RlsUnit unit) noexcept;

}  // namespace ratelimitd::policy
