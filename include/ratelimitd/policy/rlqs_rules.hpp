// `rlqs:` of a config file: which quota each bucket of Envoy's rate_limit_quota filter gets
// (docs/rlqs.md).
#pragma once

#include "ratelimitd/policy/wildcard_pattern.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ratelimitd::policy {

/// A bucket id as the service reads it: its key/value pairs sorted by key.
using RlqsBucketId = std::vector<std::pair<std::string, std::string>>;

/// One `key: value` of a rule's `match:`: the bucket must hold the key, with this value, or
/// any value matching it when it holds '*' (the wildcard rules of envoy_config:).
struct RlqsMatch {
    std::string key;
    std::string value;
    std::optional<WildcardPattern> pattern;  ///< set when value holds '*'

    [[nodiscard]] bool matches(std::string_view candidate) const {
        return pattern ? pattern->matches(candidate) : candidate == value;
    }
};

/// How Envoy enforces the share it is assigned.
enum class RlqsStrategy {
    token_bucket,            ///< max_tokens = the share, refilled by the share every window
    requests_per_time_unit,  ///< the share per window; the window is 1s, 1m, 1h or 1d
};

/// What a budget's Envoys are assigned when the fleet's share ledger (Redis) does not answer.
enum class RlqsFallback {
    keep_last,    ///< no action: Envoy keeps its last assignment until its TTL
    local_share,  ///< limit / expected_envoys per window, each Envoy alone
    deny,         ///< DENY_ALL until the ledger answers again
};

/// A rule with no budget: Envoy admits (allow_all) or denies (deny_all) every request itself.
enum class RlqsBlanket { none, allow_all, deny_all };

/// One rule of a domain: the first whose matches all hold names the bucket.
struct RlqsRule {
    std::string name;                ///< its key under the domain, for logs and metrics
    std::vector<RlqsMatch> match;    ///< all must hold; none: every bucket of the domain
    RlqsBlanket blanket = RlqsBlanket::none;
    std::int64_t limit = 0;          ///< the global budget per window (blanket none)
    std::chrono::milliseconds window{0};
    RlqsStrategy strategy = RlqsStrategy::token_bucket;
    /// Counted, never enforced: Envoy is assigned allow_all.
    bool shadow = false;
    /// How long Envoy keeps an assignment without a newer one (assignment_time_to_live).
    std::chrono::milliseconds assignment_ttl{0};
    /// The reporting_interval the Envoys are expected to use: a bucket silent for three of
    /// them is idle.
    std::chrono::milliseconds reporting_interval{0};
    /// Reported this long (time_elapsed added up) without a request: the bucket is abandoned,
    /// so Envoy frees it until its next request.
    std::chrono::milliseconds idle_after{0};
    RlqsFallback fallback = RlqsFallback::keep_last;
    /// How many Envoys share the budget, for the local_share fallback.
    std::int64_t expected_envoys = 1;

    [[nodiscard]] bool matches(const RlqsBucketId& bucket) const;
};

/// The rules of every domain; a bucket no rule names is abandoned.
struct RlqsRules {
    std::map<std::string, std::vector<RlqsRule>, std::less<>> domains;

    /// The rule for `bucket` in `domain`, or nullptr.
    [[nodiscard]] const RlqsRule* find(std::string_view domain, const RlqsBucketId& bucket) const;
};

/// What the `rlqs:` section holds at most.
namespace rlqs_bounds {
inline constexpr std::size_t max_domains = 1'000;
inline constexpr std::size_t max_rules_per_domain = 1'000;
inline constexpr std::size_t max_matches_per_rule = 16;
inline constexpr std::size_t max_key_bytes = 128;
inline constexpr std::size_t max_value_bytes = 256;
}  // namespace rlqs_bounds

}  // namespace ratelimitd::policy
