// What run() serves besides the settings: where a reload reads the registry,
// what is watched, and more listeners, each with its own routes. ERL mode fills
// it (main.cpp); the ordinary start leaves it empty (the config file, watched;
// one HTTP listener).
#pragma once

#include "ratelimitd/app/config_watcher.hpp"
#include "ratelimitd/http/router.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/stats/erl_stats.hpp"
#include "ratelimitd/stats/statsd_mapper.hpp"
#include "ratelimitd/stats/statsd_sink.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::app {

/// An HTTP listener beside the main one, serving the same lanes but only
/// `routes`.
struct ExtraListener {
    std::string name;                  ///< for the log line: "debug", "prometheus"
    std::string address;               ///< HOST:PORT (port 0 picks one)
    std::vector<std::string> routes;   ///< endpoint table paths
    std::size_t max_connections = 64;  ///< an operator's door: a few scrapers and curls
};

/// ERL mode's stats (envoyproxy/ratelimit's names): where they are counted, and where they go.
struct ErlStatsRun {
    stats::ErlStats* stats = nullptr;              ///< nullptr: not counted (outlives run())
    std::optional<stats::StatsdOptions> statsd;    ///< USE_STATSD
    std::optional<stats::StatsdMapper> prometheus;  ///< USE_PROMETHEUS: on /metrics, so mapped
};

struct RunOptions {
    /// Reads the registry again (SIGHUP, a watched change); unset: the config
    /// file.
    std::function<policy::Config()> load;
    std::string config_name;  ///< how reload lines name it; unset: the config file's path
    /// A directory watched with its own fingerprint instead of the config file
    /// (when the settings' watch_config is on).
    struct WatchedDirectory {
        std::string directory;
        ConfigWatcher::Fingerprint fingerprint;
    };
    std::optional<WatchedDirectory> watch;
    /// The watched version (the config file's or the directory's fingerprint) taken before the
    /// start read it: a change made before the watch starts is reloaded once it does.
    std::optional<std::string> version_read;
    std::vector<ExtraListener> listeners;
    http::RlsJson rls_json;                ///< POST /json; unset: 404
    http::HealthcheckOptions healthcheck;  ///< GET /healthcheck
    std::vector<std::string> warnings;     ///< logged once at start, after the listeners
    ErlStatsRun erl_stats;
};

}  // namespace ratelimitd::app
