// Where ERL mode's stats go while the server runs: the statsd sink's thread, the mapped
// series on /metrics, and ratelimitd's own series about them.
#pragma once

#include "ratelimitd/app/run_options.hpp"
#include "ratelimitd/stats/erl_prometheus.hpp"
#include "ratelimitd/service/metrics.hpp"

#include <memory>
#include <string>

namespace ratelimitd::app {

class XdsSource;

/// @par Thread Safety
/// start on the main thread before any server thread runs; render from any thread after.
class ErlStatsOutputs {
public:
    /// Starts what `run` asks for; nothing when run.stats is nullptr. config_load_success and
    /// config_load_error come from `xds` when the domains come from a control plane, else from
    /// the reloads `metrics` counts (the start-up load a success). Both outlive this.
    void start(const ErlStatsRun& run, const service::Metrics& metrics, const XdsSource* xds);

    /// Prometheus text: the mapped series (USE_PROMETHEUS), the sink's datagram counts
    /// (USE_STATSD), the stat table's size and drops; "" when nothing is counted.
    [[nodiscard]] std::string render() const;

private:
    stats::ErlStats* stats_ = nullptr;
    std::unique_ptr<stats::StatsdSink> statsd_;
    std::unique_ptr<stats::ErlPrometheus> prometheus_;
};

}  // namespace ratelimitd::app
