// What a replay prints: the summary of the config, and with a baseline the other config's
// and the difference, as JSON (docs/simulate.md), text, or one self-contained HTML page.
#pragma once

#include "ratelimitd/simulate/tally.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::simulate {

/// A (policy, tenant) pair of the difference between two configs.
struct PolicyTenant {
    std::string policy;
    std::string tenant;
};

/// One policy's change from the baseline to the config.
struct PolicyDifference {
    std::string policy;
    std::uint64_t denied_before = 0;     ///< denials under the baseline
    std::uint64_t denied_after = 0;      ///< denials under the config
    std::uint64_t newly_denied = 0;      ///< tenants denied under the config, never under the baseline
    std::uint64_t no_longer_denied = 0;  ///< tenants denied under the baseline, never under the config
};

/// One replay's results, with the baseline's when there was one.
struct Report {
    Summary config;
    std::optional<Summary> baseline;
    std::vector<PolicyTenant> newly_denied;      ///< denied under config, never under the baseline
    std::vector<PolicyTenant> no_longer_denied;  ///< denied under the baseline, never under config
    std::vector<PolicyDifference> difference;    ///< every policy of either config, by name
    std::size_t top = 10;                        ///< rows of top_denied
    std::string config_name;                     ///< the files, for the text and HTML headings
    std::string baseline_name;
    std::string log_name;
};

/// Fills the difference lists from the two summaries' denials (sorted by policy, tenant), and
/// the per-policy difference.
void compare(Report& report);

/// The documented JSON: lines, requests, unparsed, unmatched, denied_requests, policies,
/// top_denied, per_minute; with a baseline also "baseline" (the same shape), newly_denied,
/// no_longer_denied and difference. Members in the documented order.
nlohmann::ordered_json to_json(const Report& report);

/// The human-readable summary.
std::string to_text(const Report& report);

/// One HTML page with nothing loaded from elsewhere: with a baseline the difference first;
/// inline SVG charts of the requests per minute (the denied share stacked) and of the denials
/// per minute per policy (both configs on one scale); then the tables.
std::string to_html(const Report& report);

}  // namespace ratelimitd::simulate
