// ERL mode: envoyproxy/ratelimit's environment (erl_variables.hpp) turned into
// ratelimitd's own settings. The settings go through the ordinary precedence
// code as an overlay of RATELIMITD_* variables (so each value is checked where
// every other one is), the registry through a config tree of the ordinary
// schema (runtime_directory.hpp builds it).
#pragma once

#include "ratelimitd/config/resolve.hpp"
#include "ratelimitd/core/error.hpp"

#include <chrono>
#include <map>
#include <utility>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::erl {

/// Where envoyproxy/ratelimit's file provider reads its config (RUNTIME_*
/// variables).
struct RuntimeLayout {
    std::string root;           ///< RUNTIME_ROOT, absolute
    std::string subdirectory;   ///< RUNTIME_SUBDIRECTORY
    std::string app_directory;  ///< RUNTIME_APPDIRECTORY
    bool ignore_dot_files = false;
    bool watch_root = true;      ///< reload on a swap of RUNTIME_ROOT (a symlink), not on file edits
    bool merge_domains = false;  ///< MERGE_DOMAIN_CONFIG

    /// The directory whose files are the config
    /// (root/subdirectory/app_directory).
    [[nodiscard]] std::string config_directory() const;
};

/// What the environment asks of the process besides its ordinary settings.
/// ERL mode's one variable of its own (envoyproxy/ratelimit has none for it): what a call
/// answers when the store fails, UNAVAILABLE (the default: Envoy's failure_mode_deny decides),
/// OK or OVER_LIMIT, any case; RATELIMITD_ENVOY_STORE_ERROR's unavailable, allow, deny.
inline constexpr std::string_view store_error_variable = "REDIS_ERROR_ANSWER";

/// What envoyproxy/ratelimit's stats variables ask (docs/envoy.md, "Stats"); app::run makes
/// the stats from it.
struct ErlStatsSetup {
    bool counted = false;   ///< a sink wants them: USE_STATSD or USE_PROMETHEUS, and not DISABLE_STATS
    bool statsd = false;    ///< USE_STATSD
    std::string statsd_host = "localhost";
    unsigned short statsd_port = 8125;
    std::vector<std::pair<std::string, std::string>> tags;  ///< EXTRA_TAGS, in their order
    std::chrono::milliseconds flush_interval{10'000};        ///< STATS_FLUSH_INTERVAL
    bool prometheus = false;  ///< USE_PROMETHEUS: the stats mapped on /metrics
    std::string mapper_file;  ///< PROMETHEUS_MAPPER_YAML; empty: envoyproxy/ratelimit's default mapping
    float near_limit_ratio = 0.8F;  ///< NEAR_LIMIT_RATIO
};

struct ErlMode {
    /// RATELIMITD_* variable -> text, read before the process environment
    /// (overlay_lookup).
    std::map<std::string, std::string> overlay;
    std::optional<RuntimeLayout> runtime;          ///< CONFIG_TYPE=FILE; none: domains come from xDS
    bool charge_denied = true;                     ///< !STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT
    std::string debug_listen;                      ///< DEBUG_HOST:DEBUG_PORT
    std::optional<std::string> prometheus_listen;  ///< USE_PROMETHEUS: PROMETHEUS_ADDR as HOST:PORT
    bool healthcheck_needs_domain = false;         ///< HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED
    bool healthcheck_pings_store = false;          ///< REDIS_HEALTH_CHECK_ACTIVE_CONNECTION
    std::vector<std::string> warnings;             ///< said at start (DogStatsD, tracing, ...)
    /// RATELIMITD_ERL_NOTIFY_FILE (erl_notify_file.hpp), absolute: its `notify:` section joins the
    /// config each time it is loaded; empty: no quota webhooks, as envoyproxy/ratelimit has none.
    std::string notify_file;
    ErlStatsSetup stats;
};

/// Reads every row of erl_variables() from `env` (unset: envoyproxy/ratelimit's
/// default). Fails (invalid_request) on the first value refused, naming the
/// variable and why; never echoes a secret (REDIS_AUTH, REDIS_SENTINEL_AUTH).
/// Relative paths are taken from `cwd`. Never throws.
result<ErlMode> map_erl_environment(const config::EnvLookup& env, const std::string& cwd);

/// Looks a name up in `mode.overlay` first, then in `fallback` (the process
/// environment). `mode` must outlive the lookup.
config::EnvLookup overlay_lookup(const ErlMode& mode, config::EnvLookup fallback);

/// True when the process was started as envoyproxy/ratelimit's binary:
/// argv[0]'s last path part is "ratelimit".
bool started_as_ratelimit(const char* argv0) noexcept;

}  // namespace ratelimitd::erl
