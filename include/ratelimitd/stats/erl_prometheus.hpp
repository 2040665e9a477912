// ERL mode's USE_PROMETHEUS: envoyproxy/ratelimit's stats on /metrics under the names its
// mapping (PROMETHEUS_MAPPER_YAML, else its default) gives them, summed where two stat names
// map to one series, as statsd_exporter adds them.
#pragma once

#include "ratelimitd/stats/erl_stats.hpp"
#include "ratelimitd/stats/statsd_mapper.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace ratelimitd::stats {

/// @par Thread Safety
/// render from any thread (one at a time inside).
class ErlPrometheus {
public:
    /// `stats` must outlive this.
    ErlPrometheus(ErlStats& stats, StatsdMapper mapper) : stats_(stats), mapper_(std::move(mapper)) {}

    /// Prometheus text of every counter that counted something, `# TYPE` lines included.
    [[nodiscard]] std::string render();

private:
    ErlStats& stats_;
    const StatsdMapper mapper_;
    std::mutex mu_;
    /// Each counter's series ("name{labels}" split at the brace), by counter index: mapped once.
    std::vector<std::pair<std::string, std::string>> series_;
};

}  // namespace ratelimitd::stats
