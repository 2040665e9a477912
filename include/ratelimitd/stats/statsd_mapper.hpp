// The part of statsd_exporter's mapping format (PROMETHEUS_MAPPER_YAML) that
// envoyproxy/ratelimit's default mapper and Envoy Gateway's use: `mappings:` of `match` (a
// glob, or `match_type: regex`), `name`, `labels` with $1.. captures, `match_metric_type`;
// `timer_type` and `scale` are read and ignored (no timers are emitted). Anything else is
// refused when the file is read, naming it.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/stats/statsd_glob.hpp"

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ratelimitd::stats {

/// A Prometheus name and labels a statsd name maps to.
struct MappedName {
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;  ///< in the mapping's order
};

/// Maps statsd counter names as statsd_exporter does: the glob mappings first (in file order),
/// then the regex ones (in file order); the first that matches names the series.
/// @par Thread Safety
/// const members from any thread.
class StatsdMapper {
public:
    /// Reads a mapping file's text; `source` names it in a refusal ("PROMETHEUS_MAPPER_YAML
    /// /etc/x.yaml: mappings[3].action: not supported ...").
    static result<StatsdMapper> parse(std::string_view yaml, std::string_view source);
    /// envoyproxy/ratelimit's own mapping (its PROMETHEUS_MAPPER_YAML unset).
    static const StatsdMapper& erl_default();

    /// The series a counter named `statsd_name` goes to; nothing when no mapping matches.
    [[nodiscard]] std::optional<MappedName> map(std::string_view statsd_name) const;

    /// What statsd_exporter names an unmapped counter: each byte outside [A-Za-z0-9_] as '_',
    /// and '_' before a leading digit.
    [[nodiscard]] static std::string escape_name(std::string_view statsd_name);

    struct Mapping {
        bool regex = false;
        std::string match;
        std::vector<std::string> glob_parts;  ///< the glob split at '.'
        std::optional<std::regex> pattern;
        bool counters = true;                 ///< match_metric_type absent or counter
        std::string name;                     ///< may hold $n
        std::vector<std::pair<std::string, std::string>> labels;  ///< values may hold $n
    };

private:
    std::vector<Mapping> mappings_;
};

}  // namespace ratelimitd::stats
