// ErlStatsOutputs: made at start from RunOptions::erl_stats.
#include "ratelimitd/app/erl_stats_outputs.hpp"

#include "ratelimitd/app/xds_source.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::app {

void ErlStatsOutputs::start(const ErlStatsRun& run, const service::Metrics& metrics, const XdsSource* xds) {
    stats_ = run.stats;
    if (stats_ == nullptr) return;
    if (xds != nullptr) {
        stats_->set_config_loads([xds] { return std::pair{xds->metrics().accepted(), xds->metrics().rejected()}; });
    } else {
        // envoyproxy/ratelimit counts its first load as a success too.
        stats_->set_config_loads([&metrics] { return std::pair{1 + metrics.reloads(true), metrics.reloads(false)}; });
    }
    if (run.statsd) {
        statsd_ = std::make_unique<stats::StatsdSink>(*stats_, *run.statsd);
        spdlog::info("stats: statsd lines to {}:{} every {}ms", run.statsd->host, run.statsd->port,
                     run.statsd->interval.count());
    }
    if (run.prometheus) prometheus_ = std::make_unique<stats::ErlPrometheus>(*stats_, *run.prometheus);
}

std::string ErlStatsOutputs::render() const {
    if (stats_ == nullptr) return "";
    return (prometheus_ ? prometheus_->render() : std::string()) + (statsd_ ? statsd_->render() : std::string()) +
           stats_->render_own();
}

}  // namespace ratelimitd::app
