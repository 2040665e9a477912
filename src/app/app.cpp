// run(): settings -> registry -> backend -> server threads -> listen -> signals -> shutdown.
#include "ratelimitd/app/app.hpp"
#include "ratelimitd/app/backend_metrics.hpp"
#include "ratelimitd/app/config_audit.hpp"
#include "ratelimitd/app/config_warnings.hpp"
#include "ratelimitd/app/config_watcher.hpp"
#include "ratelimitd/app/erl_stats_outputs.hpp"
#include "ratelimitd/app/fd_limit.hpp"
#include "ratelimitd/app/reload.hpp"
#include "ratelimitd/app/rlqs_shares.hpp"
#include "ratelimitd/app/server_threads.hpp"
#include "ratelimitd/app/signals.hpp"
#include "ratelimitd/app/status_sampler.hpp"
#include "ratelimitd/app/xds_source.hpp"
#include "ratelimitd/app/tracing.hpp"

#include "ratelimitd/core/clock.hpp"
#include "ratelimitd/core/tls_reloads.hpp"
#include "ratelimitd/grpc/grpc_server.hpp"
#include "ratelimitd/http/loopback.hpp"
#include "ratelimitd/notify/notifier.hpp"
#include "ratelimitd/store/backend_factory.hpp"
#include "ratelimitd/store/unit_routing_backend.hpp"

#include <boost/asio/ip/address.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <functional>
#include <optional>
#include <random>

#include <unistd.h>

namespace ratelimitd::app {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

std::string random_instance_id() {
    std::random_device rd;
    std::uint64_t v = (static_cast<std::uint64_t>(rd()) << 32) | rd();
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string format_endpoint(const tcp::endpoint& ep) {
    const auto host = ep.address().to_string();
    return (ep.address().is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(ep.port());
}

void log_settings(const Settings& settings) {
    spdlog::debug("settings: config={} listen={}:{} threads={} store_timeout={}ms log_format={} "
                  "max_connections={} max_requests_per_connection={} request_timeout={}ms memory_max_keys={}",
                  settings.config_path, settings.listen_host, settings.listen_port, settings.threads,
                  settings.store_timeout.count(), settings.log_format, settings.max_connections,
                  settings.max_requests_per_connection, settings.request_timeout.count(),
                  settings.memory_max_keys);
}

WarningContext warning_context(const Settings& settings) {
    return {.secret_from_environment = settings.hash_secret.has_value(),
            .grpc_serving = settings.grpc_listen.has_value(),
            .domains_from_xds = settings.xds_server.has_value()};
}

// envoyproxy/ratelimit's REDIS_PERSECOND: `other_units` beside a second store for the
// counters of per-second limits, or nothing after an error line.
std::unique_ptr<store::Backend> add_per_second_store(const Settings& settings,
                                                     std::unique_ptr<store::Backend> other_units,
                                                     store::BackendOptions options) {
    if (!settings.redis_url) {
        spdlog::error("redis_per_second: a per-second store needs a Redis store for the other units (redis)");
        return nullptr;
    }
    auto per_second = store::make_backend(settings.redis_per_second_url, std::move(options));
    if (!per_second) {
        spdlog::error("redis_per_second: {}", per_second.error().detail);
        return nullptr;
    }
    return std::make_unique<store::UnitRoutingBackend>(std::move(other_units), std::move(*per_second));
}

// The store the settings name, or nothing after an error line (a bad URL, a config the store refuses).
std::unique_ptr<store::Backend> open_backend(const Settings& settings, const policy::RegistryHandle& registry,
                                             const Clock& clock) {
    store::BackendOptions options{
        .clock = &clock,
        .timeout = settings.store_timeout,
        .instance_id = random_instance_id(),
        .denial_cache = settings.denial_cache,
        .coalescing = settings.coalescing,
        .memory_max_keys = settings.memory_max_keys,
        .tls = {settings.redis_tls_ca, settings.redis_tls_cert, settings.redis_tls_key, settings.redis_tls_server_name,
                settings.redis_tls_insecure_skip_verify},
        .state_layout = settings.redis_state_layout == "hash" ? store::StateLayout::hash : store::StateLayout::string,
        .key_prefix = [&registry] { return registry.current()->prefix; },
    };
    auto backend = store::make_backend(settings.redis_url, options);
    if (!backend) {
        spdlog::error("{}", backend.error().detail);
        return nullptr;
    }
    if (settings.redis_per_second_url) {
        auto with_per_second = add_per_second_store(settings, std::move(*backend), std::move(options));
        if (!with_per_second) return nullptr;
        *backend = std::move(with_per_second);
    }
    if (auto refusal = (*backend)->refusal(*registry.current())) {
        spdlog::error("{}: {}", settings.config_path, *refusal);
        return nullptr;
    }
    // The first step of an upgrade: said at start, so that the second is not forgotten.
    if (settings.redis_url && settings.redis_state_layout == "hash") {
        spdlog::info("redis_state_layout=hash: token buckets are written as earlier versions read them; "
                     "remove the setting once none of them runs (docs/operations.md, Upgrading)");
    }
    return std::move(*backend);
}

http::RouterOptions router_options(const Settings& settings, const store::Backend& backend,
                                   const policy::Registry& registry, const RunOptions& run) {
    http::RouterOptions options;
    options.rls_json = run.rls_json;
    options.healthcheck = run.healthcheck;
    options.version = RATELIMITD_VERSION;
    options.store_name = std::string(backend.kind());
    options.admin_token = settings.admin_token;
    options.access_log = settings.access_log == "all"      ? http::AccessLogMode::all
                         : settings.access_log == "denied" ? http::AccessLogMode::denied
                                                           : http::AccessLogMode::off;
    options.access_log_sample = settings.access_log_sample;
    options.hash_secret = settings.hash_secret;
    options.max_held_requests = settings.max_held_requests;
    log_config_warnings(registry, warning_context(settings));
    return options;
}

// The listening server (not yet accepting), or nothing after an error line.
std::optional<http::Server> listen(net::io_context& main, const Settings& settings,
                                   const std::vector<http::Lane*>& lanes, std::size_t max_connections) {
    try {
        const auto address = net::ip::make_address(settings.listen_host);
        http::ServerLimits limits;
        limits.request_timeout = settings.request_timeout;
        limits.max_connections = max_connections;  // within the open-file limit (budget_connections)
        limits.max_requests_per_connection = settings.max_requests_per_connection;
        return std::optional<http::Server>(std::in_place, main, tcp::endpoint(address, settings.listen_port), lanes,
                                           limits);
    } catch (const boost::system::system_error& e) {
        spdlog::error("cannot listen on {}:{}: {}", settings.listen_host, settings.listen_port,
                      e.code().message());
        return std::nullopt;
    }
}

void announce(const http::Server& server, const store::Backend& backend, const policy::Registry& registry,
              const Settings& settings) {
    // Warned before the "listening on" line: whoever waits for that line to know the server is
    // up has every start warning in hand by then.
    if (!settings.admin_token && !http::is_loopback_address(server.local_endpoint().address().to_string())) {
        spdlog::warn("bound to a non-loopback address without an admin token: /v1/policies, /v1/peek and "
                     "/v1/reset answer only loopback peers (others get 403 admin_disabled); set "
                     "RATELIMITD_ADMIN_TOKEN to call them from elsewhere");
    }
    spdlog::info("listening on {} store={} policies={} threads={}", format_endpoint(server.local_endpoint()),
                 backend.describe(), registry.policies.size(), settings.threads);
}

// A changed file (an edit, a ConfigMap update) is reloaded by SIGHUP's own path, so both
// refuse and apply exactly alike; `changed_on_disk` tells the audit trail which it was.
void watch_config(net::io_context& main, const Settings& settings, const RunOptions& run,
                  std::optional<ConfigWatcher>& watcher, bool& changed_on_disk) {
    if (!settings.watch_config) return;
    if (run.watch) {
        watcher.emplace(main.get_executor(), run.watch->directory, run.watch->fingerprint, [&run, &changed_on_disk] {
            spdlog::info("{} changed on disk: reloading", run.watch->directory);
            changed_on_disk = true;
            ::kill(::getpid(), SIGHUP);
        });
    } else {
        if (settings.config_path.empty()) return;
        watcher.emplace(main.get_executor(), settings.config_path, [&settings, &changed_on_disk] {
            spdlog::info("{} changed on disk: reloading", settings.config_path);
            changed_on_disk = true;
            ::kill(::getpid(), SIGHUP);
        });
    }
    if (!watcher->start(run.version_read)) {
        spdlog::warn("cannot watch {} for changes (inotify); reload it with SIGHUP",
                     run.watch ? run.watch->directory : settings.config_path);
    }
}

// The listeners beside the main one (ERL mode's debug and Prometheus ports), each serving its
// own routes on the same lanes; false after an error line when one cannot listen.
bool start_extra_listeners(net::io_context& main, const Settings& settings, const RunOptions& run,
                           const ServerThreads& threads, std::vector<std::unique_ptr<http::Server>>& out) {
    for (const auto& extra : run.listeners) {
        const auto host_port = parse_listen(extra.address, extra.name);
        if (!host_port) {
            spdlog::error("{}", host_port.error().detail);
            return false;
        }
        try {
            http::ServerLimits limits;
            limits.request_timeout = settings.request_timeout;
            limits.max_connections = extra.max_connections;
            limits.routes = extra.routes;
            auto server = std::make_unique<http::Server>(
                main, tcp::endpoint(net::ip::make_address(host_port->first), host_port->second), threads.lanes(),
                limits);
            server->start();
            spdlog::info("{} listening on {}", extra.name, format_endpoint(server->local_endpoint()));
            out.push_back(std::move(server));
        } catch (const boost::system::system_error& e) {
            spdlog::error("cannot listen on {} ({}): {}", extra.address, extra.name, e.code().message());
            return false;
        }
    }
    return true;
}

// The gRPC server when grpc_listen is set (nullptr when it is not), or an error line and
// false when it cannot listen. Bound before HTTP accepts, announced after it (its line comes
// second, so "listening on" first names the HTTP address, as it always has).
rls::GrpcTlsOptions grpc_tls_options(const Settings& settings) {
    return {.enabled = settings.grpc_tls,
            .cert_file = settings.grpc_tls_cert,
            .key_file = settings.grpc_tls_key,
            .client_ca_file = settings.grpc_tls_client_ca,
            .client_san = settings.grpc_tls_client_san,
            // The file watcher counts whole seconds: round up, never to 0.
            .reload_interval = std::chrono::ceil<std::chrono::seconds>(settings.grpc_tls_reload_interval)};
}

bool start_grpc(net::io_context& main, const Settings& settings, const RunOptions& run, std::size_t max_connections,
                const ServerThreads& threads, rls::GrpcMetrics& metrics, const trace::Tracer* tracer,
                std::unique_ptr<rls::GrpcServer>& out) {
    const auto tls = grpc_tls_options(settings);
    if (!settings.grpc_listen) {
        if (!tls.any_set()) return true;
        spdlog::error("grpc_tls settings are set but grpc_listen is not: there is no gRPC listener to secure");
        return false;
    }
    const auto host_port = parse_listen(*settings.grpc_listen, "grpc_listen");  // checked when read
    rls::GrpcServerOptions options;
    options.headers = grpc_response_headers(settings);
    options.max_connections = max_connections;
    options.handshake_timeout = settings.grpc_handshake_timeout;
    options.idle_timeout = settings.grpc_idle_timeout;
    options.max_connection_age = settings.grpc_max_connection_age;
    // Long enough for a call in flight to finish (each ends within the store deadline).
    options.max_connection_age_grace = settings.store_timeout + std::chrono::seconds(10);
    options.tls = tls;
    options.health_needs_domain = run.healthcheck.needs_domain;
    options.erl_stats = run.erl_stats.stats;
    options.tracer = tracer;
    options.trace_store_name = std::string(threads.backend().kind());
    options.rlqs_shares = open_rlqs_shares(settings);
    auto server = rls::GrpcServer::start(main.get_executor(), host_port->first, host_port->second,
                                         threads.service_lanes(), metrics, options);
    if (!server) {
        spdlog::error("{}", server.error().detail);
        return false;
    }
    out = std::move(*server);
    return true;
}

// The audit trail, writing to `audit_log` when it is set; false after an error line naming the
// path and why it cannot be opened.
bool open_audit(const Settings& settings, audit::AuditTrail& trail) {
    if (!settings.audit_log) return true;
    if (auto opened = trail.open(*settings.audit_log); !opened) {
        spdlog::error("{}", opened.error().detail);
        return false;
    }
    return true;
}

// SIGHUP's reload, by the reloader's road (as an xDS update); a real SIGHUP also reopens the
// audit log (logrotate).
void reload_file(const Settings& settings, const RunOptions& run, ConfigReloader& reloader, XdsSource* xds,
                 audit::AuditTrail& trail, bool& changed_on_disk) {
    const std::string_view source = changed_on_disk ? config_source::file_change : config_source::sighup;
    changed_on_disk = false;
    if (source == config_source::sighup) {
        if (auto reopened = trail.reopen(); !reopened) spdlog::warn("{}", reopened.error().detail);
    }
    // The control plane's domains laid over the file's registry, when there is one.
    std::function<void(policy::Registry&)> overlay;
    if (xds) overlay = [xds](policy::Registry& r) { xds->overlay(r); };
    if (run.load) {
        reloader.apply(ConfigReloader::file_change(source, run.config_name, run.load, overlay));
        return;
    }
    const policy::LoadOptions load{.envoy_rules_from_xds = settings.xds_server.has_value()};
    const auto& path = settings.config_path;
    reloader.apply(ConfigReloader::file_change(
        source, path, [path, load] { return policy::load_config(path, load); }, overlay));
}

// The xDS client's options when xds_server is set (nothing when it is not); false after an
// error line when they are wrong, or when xds_* settings are set without xds_server.
bool read_xds_options(const Settings& settings, std::optional<xds::XdsClientOptions>& out) {
    auto options = xds_client_options(settings);
    if (options) {
        out = std::move(*options);
        return true;
    }
    if (!settings.xds_server && options.error().detail == "xds_server: not set") return true;
    spdlog::error("{}", options.error().detail);
    return false;
}

void announce_grpc(const rls::GrpcServer* grpc, const Settings& settings) {
    if (!grpc) return;
    spdlog::info("grpc listening on {} tls={}{}", grpc->address(), settings.grpc_tls ? "on" : "off",
                 settings.grpc_tls_client_ca.empty() ? "" : " client_certificates=required");
}

void start_xds(XdsSource* xds, const Settings& settings) {
    if (!xds) return;
    xds->start();
    spdlog::info("xds: the Envoy domains come from {} node={} tls={}{}", *settings.xds_server, settings.xds_node_id,
                 settings.xds_tls ? "on" : "off",
                 settings.xds_force_start ? "" : " (not ready until its first config)");
}

// In-flight gRPC calls finish within the store deadline; this is only a bound for a stuck one.
constexpr std::chrono::milliseconds grpc_grace{5'000};

// After the accept loop stopped: close the listener, stop and join the threads, free them.
int shut_down(net::io_context& main, std::optional<http::Server>& server, std::unique_ptr<ServerThreads>& threads,
              std::unique_ptr<rls::GrpcServer>& grpc, std::vector<std::unique_ptr<http::Server>>& extras) {
    // Calls in flight finish on the lanes, so the gRPC server stops while they still run.
    if (grpc) grpc->stop(grpc_grace);
    grpc.reset();
    // A drain that finds no session stops main before the acceptor's close (posted) has
    // run; the pending accept names a lane's io_context, so finish it now, while the lanes
    // still exist, instead of at main's destruction after theirs.
    main.restart();
    server->drain();
    for (auto& extra : extras) extra->drain();
    main.poll();
    extras.clear();
    threads->stop_and_join();
    const auto left = server->live_sessions();
    server.reset();
    threads.reset();
    spdlog::info("stopped{}", left ? fmt::format(" ({} connections cut at the drain deadline)", left) : "");
    return 0;
}

// The process's tracing (null: off), its tracer handed to the doors through `options` (the one
// place every door, HTTP and gRPC, takes it from). False when a trace setting cannot be used.
bool set_up_tracing(const Settings& settings, std::string_view store_kind, http::RouterOptions& options,
                    std::unique_ptr<Tracing>& out) {
    bool failed = false;
    out = Tracing::from_settings(settings, RATELIMITD_VERSION, failed);
    if (failed) return false;
    if (out) options.tracer = &out->tracer();
    options.trace_store_name = std::string(store_kind);
    return true;
}

// What the status page samples: the request totals and the quota webhooks' own counters.
StatusSampler::ReadTotals status_totals(const service::Metrics& metrics, const notify::Notifier& notifier) {
    return [&metrics, &notifier] {
        return service::StatusInputs{metrics.totals(), notifier.sent(), notifier.metrics().dropped(),
                                     metrics.delays.held()};
    };
}

/// What run() has built for serving, owned by run's frame.
struct Running {
    policy::RegistryHandle& registry;
    ConfigReloader& reloader;
    std::unique_ptr<XdsSource>& xds;
    audit::AuditTrail& trail;
    std::unique_ptr<ServerThreads>& threads;
    rls::GrpcMetrics& grpc_metrics;
    ConnectionBudget budget;
    service::StatusHistory& history;  ///< the status page's last 15 minutes
    StatusSampler::ReadTotals read_totals;
    const http::RouterOptions& options;  ///< what the doors were given (the tracer: the gRPC door's too)
};

// The listeners, signals and the config watcher, served on the main thread until SIGTERM, then
// the shutdown. What this starts lives in this frame, inside run's, so it stops before the
// threads and the store: the order the process always stopped in.
int serve(net::io_context& main_ioc, const Settings& settings, const RunOptions& run, const Running& r) {
    auto server = listen(main_ioc, settings, r.threads->lanes(), r.budget.http);
    if (!server) return 1;
    // Signals are caught from here on, before the "listening on" line: whoever sends SIGHUP or
    // SIGTERM once it sees that line must not meet the default action (the process killed).
    // They are handled once main_ioc runs, when everything below has started.
    bool changed_on_disk = false;  // main thread only: the watcher's SIGHUP, not an operator's
    SignalHandler signals(main_ioc, *server, [&] {
        reload_file(settings, run, r.reloader, r.xds.get(), r.trail, changed_on_disk);
    });
    signals.start();
    r.threads->start(main_ioc.get_executor());
    std::unique_ptr<rls::GrpcServer> grpc;
    if (!start_grpc(main_ioc, settings, run, r.budget.grpc, *r.threads, r.grpc_metrics, r.options.tracer, grpc)) return 1;
    server->start();
    announce(*server, r.threads->backend(), *r.registry.current(), settings);
    std::vector<std::unique_ptr<http::Server>> extras;
    if (!start_extra_listeners(main_ioc, settings, run, *r.threads, extras)) return 1;
    for (const auto& warning : run.warnings) spdlog::warn("{}", warning);
    announce_grpc(grpc.get(), settings);
    start_xds(r.xds.get(), settings);

    std::optional<ConfigWatcher> watcher;
    watch_config(main_ioc, settings, run, watcher, changed_on_disk);
    StatusSampler sampler(main_ioc.get_executor(), r.history, r.read_totals);
    sampler.start();
    main_ioc.run();
    // The client's thread posts to main_ioc: stopped before anything it names goes.
    if (r.xds) r.xds->stop();
    return shut_down(main_ioc, server, r.threads, grpc, extras);
}

}  // namespace

int run(const Settings& settings, policy::Config config, const RunOptions& run) {
    log_settings(settings);
    std::optional<xds::XdsClientOptions> xds_options;
    if (!read_xds_options(settings, xds_options)) return 1;
    // xds_server: the Envoy domains wait for the control plane (the loader allowed a file without them).
    if (xds_options) config.registry.awaiting_xds = true;
    // Both listeners take descriptors from one open-file limit: each gets its share.
    const auto budget = budget_connections(settings.max_connections,
                                           settings.grpc_listen ? settings.grpc_max_connections : 0);
    policy::RegistryHandle registry(std::make_shared<const policy::Registry>(std::move(config.registry)),
                                    envoy_keys(settings, run.load != nullptr || xds_options.has_value()));
    SystemClock clock;
    auto backend = open_backend(settings, registry, clock);
    if (!backend) return 1;
    service::Metrics metrics;
    report_backend_stats(metrics, *backend);
    // Heavy hitters (GET /v1/top); top_k 0 keeps them off the hot path entirely.
    service::TopBoard top({.k = settings.top_k, .window = settings.top_window});
    auto options = router_options(settings, *backend, *registry.current(), run);
    // Before the threads that trace into it; destroyed (its last export) after they are joined.
    std::unique_ptr<Tracing> tracing;
    if (!set_up_tracing(settings, backend->kind(), options, tracing)) return 1;
    audit::AuditTrail trail;
    if (!open_audit(settings, trail)) return 1;
    options.audit = &trail;
    service::StatusHistory history;
    options.status_history = &history;
    audit_config_applied(trail, config_source::start, audit::Actor{},
                         run.load ? run.config_name : settings.config_path, nullptr, *registry.current());
    rls::GrpcMetrics grpc_metrics;
    std::unique_ptr<XdsSource> xds;
    options.ready_before_xds_config = settings.xds_force_start;
    // Quota webhooks: made before the threads that offer to it, destroyed after they are joined.
    notify::Notifier notifier(notify::NotifierOptions{.queue = settings.notify_queue});
    ErlStatsOutputs erl_outputs;
    options.extra_metrics = [&grpc_metrics, &xds, &notifier, &erl_outputs, &tracing,
                             grpc = settings.grpc_listen.has_value()] {
        return (grpc ? grpc_metrics.render() : std::string()) + (xds ? xds->metrics().render() : std::string()) +
               notifier.metrics().render() + TlsReloads::process().render() + erl_outputs.render() +
               (tracing ? tracing->metrics_text() : std::string());
    };

    // The main thread accepts connections and handles signals; the server threads serve sessions.
    net::io_context main_ioc(1);
    // Made before the threads read `xds` (the metrics); the backend object outlives the move below.
    // The one road into the registry: file reloads here, xDS updates on the client's thread.
    ConfigReloader reloader(registry, *backend, metrics, warning_context(settings), &trail);
    if (xds_options) xds = std::make_unique<XdsSource>(std::move(*xds_options), reloader);
    // Before the threads count into them; stopped (the sink's last flush) after they are joined.
    erl_outputs.start(run.erl_stats, metrics, xds.get());
    auto threads = std::make_unique<ServerThreads>(
        std::move(backend), settings.threads,
        Serving{registry, metrics, options, settings.top_k > 0 ? &top : nullptr, &notifier});
    return serve(main_ioc, settings, run,
                 Running{registry, reloader, xds, trail, threads, grpc_metrics, budget, history,
                         status_totals(metrics, notifier), options});
}

}  // namespace ratelimitd::app
