// ratelimitd entry point: parse the command line, load the config, run.
#include "ratelimitd/app/app.hpp"
#include "ratelimitd/app/config_warnings.hpp"
#include "ratelimitd/app/logging.hpp"
#include "ratelimitd/app/settings.hpp"
#include "ratelimitd/erl/erl_environment.hpp"
#include "ratelimitd/erl/runtime_directory.hpp"
#include "ratelimitd/erl/unknown_variables.hpp"
#include "ratelimitd/grpc/json_call.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/simulate/command.hpp"
#include "ratelimitd/store/backend_factory.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

using namespace ratelimitd;

namespace {

// What the file is read with: xds_server set by a flag or the environment lets it hold no rules.
policy::LoadOptions load_options(const app::CommandLine& cl, const app::EnvLookup& env) {
    return {.envoy_rules_from_xds = config::setting_text("xds-server", cl, env).has_value()};
}

// --check-config FILE: exit 0 (with the config's warnings on stderr) when it would be served,
// 1 naming the refusal otherwise.
int check_config(const app::CommandLine& cl, const app::EnvLookup& env) {
    try {
        auto config = policy::load_config(cl.file, load_options(cl, env));
        // The store the file (or RATELIMITD_REDIS_URL) names decides what the registry may ask.
        const auto settings = app::resolve_settings(cl, config.settings, env);
        if (settings) {
            if (auto refusal = store::registry_refusal(settings->redis_url, config.registry)) {
                std::fprintf(stderr, "%s: %s\n", cl.file.c_str(), refusal->c_str());
                return 1;
            }
        }
        // Valid, but maybe limiting less than it seems to: said here as at start.
        const app::WarningContext context{
            .secret_from_environment = settings && settings->hash_secret.has_value(),
            .grpc_serving = settings && settings->grpc_listen.has_value(),
            .domains_from_xds = settings && settings->xds_server.has_value()};
        for (const auto& warning : app::config_warnings(config.registry, context)) {
            std::fprintf(stderr, "%s: warning: %s\n", cl.file.c_str(), warning.c_str());
        }
        std::printf("%s: OK (%zu policies, %zu routes)\n", cl.file.c_str(), config.registry.policies.size(),
                    config.registry.routes.size());
        return 0;
    } catch (const policy::ConfigError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}

// ERL mode's watch: the runtime directory's files, each through its symlinks; a swap of the
// root or of a ConfigMap's ..data, a file added, removed or rewritten gives another print.
app::ConfigWatcher::Fingerprint runtime_fingerprint(erl::RuntimeLayout layout) {
    return [layout]() -> std::optional<std::string> {
        try {
            std::string print;
            for (const auto& file : erl::runtime_config_files(layout)) {
                print += file + "=" + app::ConfigWatcher::file_identity(file).value_or("gone") + "\n";
            }
            return print;
        } catch (const policy::ConfigError&) {
            return std::nullopt;  // mid-swap: wait for the next event
        }
    };
}

// USE_STATSD and USE_PROMETHEUS: the sink and the mapping; a mapping file that cannot be read
// or asks for what is not implemented stops the start (false, after a line naming why).
bool erl_stats_run(const erl::ErlMode& mode, stats::ErlStats* counted, app::ErlStatsRun& out) {
    if (!mode.stats.counted) return true;
    out.stats = counted;
    const auto& s = mode.stats;
    if (s.statsd) {
        out.statsd = stats::StatsdOptions{
            .host = s.statsd_host, .port = s.statsd_port, .interval = s.flush_interval, .tags = s.tags};
    }
    if (!s.prometheus) return true;
    if (s.mapper_file.empty()) {
        out.prometheus = stats::StatsdMapper::erl_default();
        return true;
    }
    std::ifstream in(s.mapper_file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
        std::fprintf(stderr, "ratelimitd (ERL mode): PROMETHEUS_MAPPER_YAML: cannot read %s\n", s.mapper_file.c_str());
        return false;
    }
    auto mapper = stats::StatsdMapper::parse(text.str(), "PROMETHEUS_MAPPER_YAML " + s.mapper_file);
    if (!mapper) {
        std::fprintf(stderr, "ratelimitd (ERL mode): %s\n", mapper.error().detail.c_str());
        return false;
    }
    out.prometheus = std::move(*mapper);
    return true;
}

app::RunOptions erl_run_options(const erl::ErlMode& mode, const app::Settings& settings, stats::ErlStats* counted) {
    app::RunOptions run;
    run.load = [&mode] { return erl::load_erl_config(mode); };
    run.config_name = mode.runtime ? mode.runtime->config_directory() : std::string("xDS");
    if (mode.runtime) run.watch = {erl::watched_directory(*mode.runtime), runtime_fingerprint(*mode.runtime)};
    run.listeners.push_back({"debug", mode.debug_listen, {"/rlconfig", "/metrics", "/healthcheck"}});
    if (mode.prometheus_listen) run.listeners.push_back({"prometheus", *mode.prometheus_listen, {"/metrics"}});
    run.rls_json = rls::make_rls_json({}, app::grpc_response_headers(settings), mode.stats.counted ? counted : nullptr);
    run.healthcheck = {.pings_store = mode.healthcheck_pings_store, .needs_domain = mode.healthcheck_needs_domain};
    run.warnings = mode.warnings;
    return run;
}

// The names of the process environment, in its order (ERL mode warns of those it ignores).
std::vector<std::string> environment_names() {
    std::vector<std::string> names;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry(*e);
        names.emplace_back(entry.substr(0, entry.find('=')));
    }
    return names;
}

// Started as `ratelimit` or with --erl-env: envoyproxy/ratelimit's environment is the whole
// configuration (docs/envoy.md, "Replacing envoyproxy/ratelimit").
int serve_erl(const app::CommandLine& cl, const app::EnvLookup& process_env) {
    std::error_code ec;
    const auto cwd = std::filesystem::current_path(ec);
    const auto mode = erl::map_erl_environment(process_env, ec ? std::string("/") : cwd.string());
    if (!mode) {
        std::fprintf(stderr, "ratelimitd (ERL mode): %s\n", mode.error().detail.c_str());
        return 1;
    }
    const auto env = erl::overlay_lookup(*mode, process_env);
    policy::Config config;
    // Taken before the read: a change made before the watch starts is reloaded once it does.
    const auto version_read = mode->runtime ? runtime_fingerprint(*mode->runtime)() : std::nullopt;
    try {
        config = erl::load_erl_config(*mode);
    } catch (const policy::ConfigError& e) {
        std::fprintf(stderr, "ratelimitd (ERL mode): %s\n", e.what());
        return 1;
    }
    auto settings = app::resolve_settings(cl, config.settings, env);
    if (!settings) {
        std::fprintf(stderr, "ratelimitd (ERL mode): %s\n", settings.error().detail.c_str());
        return 2;
    }
    app::setup_logging(settings->log_level, settings->log_format);
    // Counted into for the whole run: the gRPC service, /json and the sinks point at it.
    stats::ErlStats counted({.near_limit_ratio = mode->stats.near_limit_ratio});
    auto run = erl_run_options(*mode, *settings, &counted);
    run.version_read = version_read;
    if (!erl_stats_run(*mode, &counted, run.erl_stats)) return 1;
    for (auto& warning : erl::unknown_variable_warnings(environment_names())) run.warnings.push_back(std::move(warning));
    return app::run(*settings, std::move(config), run);
}

}  // namespace

int main(int argc, char** argv) {
    const app::EnvLookup env = [](const char* name) { return std::getenv(name); };
    // `ratelimitd simulate ...`: an offline replay with flags of its own (docs/simulate.md).
    if (argc > 1 && std::string_view(argv[1]) == "simulate") return simulate::run_command(argc - 1, argv + 1, env);
    auto cl = app::parse_command_line(argc, argv);
    if (!cl) {
        std::fprintf(stderr, "ratelimitd: %s\n", cl.error().detail.c_str());
        return 2;
    }
    switch (cl->command) {
    case app::Command::help:
        std::fputs(app::usage(), stdout);
        return 0;
    case app::Command::version:
        std::printf("ratelimitd %s\n", RATELIMITD_VERSION);
        return 0;
    case app::Command::check_config:
        return check_config(*cl, env);
    case app::Command::serve:
        break;
    }
    if (cl->erl_env || erl::started_as_ratelimit(argv[0])) return serve_erl(*cl, env);

    // Log set-up needs the settings, which need the file: report early problems on stderr.
    auto path = app::config_path(*cl, env);
    if (!path) {
        std::fprintf(stderr, "ratelimitd: --config FILE is required (or RATELIMITD_CONFIG)\n%s", app::usage());
        return 2;
    }
    app::RunOptions run;
    run.version_read = app::ConfigWatcher::file_identity(*path);  // before the read, as above
    policy::Config config;
    try {
        config = policy::load_config(*path, load_options(*cl, env));
    } catch (const policy::ConfigError& e) {
        std::fprintf(stderr, "ratelimitd: %s\n", e.what());
        return 1;
    }
    auto settings = app::resolve_settings(*cl, config.settings, env);
    if (!settings) {
        std::fprintf(stderr, "ratelimitd: %s\n", settings.error().detail.c_str());
        return 2;
    }
    app::setup_logging(settings->log_level, settings->log_format);
    return app::run(*settings, std::move(config), run);
}
