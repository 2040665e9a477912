// The descriptor key path envoyproxy/ratelimit names a descriptor's stats by
// ("ratelimit.service.rate_limit." + path + ".total_hits"), as its config_impl.go builds it.
#pragma once

#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::stats {

/// `name` as envoyproxy/ratelimit's SanitizeStatName leaves it: ':' and '|' become '_', and so
/// do the dots of anything shaped as an IPv4 address (`\d{1,3}(\.\d{1,3}){3}`, leftmost first).
/// Further, so that a name stays one statsd line: every byte outside '!'..'~' becomes '_'.
[[nodiscard]] std::string sanitize_stat_name(std::string_view name);

/// The path of a descriptor that `rule` limits when its name follows the values sent: with
/// `detailed_metric` (domain, then every entry's key_value) or when the domain has
/// `value_to_metric` rules (each level's key, with the value sent where value_to_metric asks,
/// the rule's value where it has one); nothing when the rule's own path (RlsRule::label) names
/// it. Parts are escaped as labels are (escape_label_part), not yet sanitized.
[[nodiscard]] std::optional<std::string> value_stat_path(const policy::RlsDomain& domain,
                                                         const policy::RlsRule& rule,
                                                         std::span<const policy::RlsEntry> entries);

/// The path of a descriptor that sent its own limit: domain, then each entry's key, with
/// "_" + value when it has one (envoyproxy/ratelimit's descriptorKey).
[[nodiscard]] std::string override_stat_path(std::string_view domain, std::span<const policy::RlsEntry> entries);

}  // namespace ratelimitd::stats
