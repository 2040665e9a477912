// run(): threads, stores, server, signals, drain.
#include "ratelimitd/app/app.hpp"
#include "ratelimitd/app/cluster_rules.hpp"
#include "ratelimitd/app/config_watcher.hpp"
#include "ratelimitd/app/fd_limit.hpp"
#include "ratelimitd/app/memory_sweeper.hpp"

#include "ratelimitd/core/clock.hpp"
#include "ratelimitd/http/loopback.hpp"
#include "ratelimitd/http/server.hpp"
#include "ratelimitd/policy/identity.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/service/check_service.hpp"
#include "ratelimitd/store/denial_cache.hpp"
#include "ratelimitd/store/memory/memory_store.hpp"
#include "ratelimitd/store/redis/cluster/cluster_store.hpp"
#include "ratelimitd/store/redis/redis_store.hpp"
#include "ratelimitd/store/redis/reset_channel.hpp"
#include "ratelimitd/store/redis/sentinel.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <optional>
#include <random>
#include <thread>

#include <unistd.h>

namespace ratelimitd::app {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// SIGTERM must end the process within 5 s (contract §1); this leaves room to exit.
constexpr std::chrono::milliseconds drain_deadline{4000};

/// One server thread: its io_context and everything that runs on it.
/// Destroyed in an order that keeps every object alive while handlers that use it may run.
struct Worker {
    std::unique_ptr<service::CheckService> service;
    std::unique_ptr<http::Router> router;
    std::unique_ptr<http::Lane> lane;
    std::optional<net::io_context> ioc;
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
    std::unique_ptr<store::redis::RedisStore> redis;  // this thread's pool, when Redis is used
    std::unique_ptr<store::redis::cluster::ClusterStore> cluster;  // or its pools, on a cluster
    std::unique_ptr<store::CachingStore> cached;      // the denial cache in front of it
    std::thread thread;

    ~Worker() {
        cached.reset();
        redis.reset();  // frees hiredis contexts while the io_context still exists
        cluster.reset();
        ioc.reset();    // destroys handlers never run (they may touch the lane)
    }
};

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

}  // namespace

int run(const Settings& settings, policy::Config config) {
    spdlog::debug("settings: config={} listen={}:{} threads={} store_timeout={}ms log_format={} "
                  "max_connections={} max_requests_per_connection={} request_timeout={}ms memory_max_keys={}",
                  settings.config_path, settings.listen_host, settings.listen_port, settings.threads,
                  settings.store_timeout.count(), settings.log_format, settings.max_connections,
                  settings.max_requests_per_connection, settings.request_timeout.count(),
                  settings.memory_max_keys);
    ensure_descriptors_for(settings.max_connections);
    policy::RegistryHandle registry(std::make_shared<const policy::Registry>(std::move(config.registry)));
    SystemClock clock;

    std::optional<store::redis::Endpoint> redis_endpoint;
    std::optional<store::redis::cluster::ClusterEndpoint> cluster_endpoint;
    std::shared_ptr<store::redis::SentinelMonitor> sentinel;  // redis-sentinel://: follows the primary
    const store::redis::TlsOptions tls{settings.redis_tls_ca, settings.redis_tls_cert, settings.redis_tls_key,
                                       settings.redis_tls_server_name, settings.redis_tls_insecure_skip_verify};
    if (settings.redis_url && store::redis::is_sentinel_url(*settings.redis_url)) {
        auto url = store::redis::parse_sentinel_url(*settings.redis_url);
        if (!url) {
            spdlog::error("{}", url.error().detail);
            return 1;
        }
        url->tls_options = tls;  // rediss-sentinel://
        sentinel = std::make_shared<store::redis::SentinelMonitor>(*url);
        sentinel->poll_once();  // a primary now if a sentinel names one; else the poller finds it
        redis_endpoint = sentinel->current().value_or(url->endpoint_at("127.0.0.1", 6379));
    } else if (settings.redis_url && store::redis::cluster::is_cluster_url(*settings.redis_url)) {
        auto ep = store::redis::cluster::parse_cluster_url(*settings.redis_url);
        if (!ep) {
            spdlog::error("{}", ep.error().detail);
            return 1;
        }
        if (auto refusal = cluster_refusal(*registry.current())) {
            spdlog::error("{}: {}", settings.config_path, *refusal);
            return 1;
        }
        for (auto& seed : ep->seeds) seed.tls_options = tls;  // rediss-cluster://
        cluster_endpoint = *ep;
    } else if (settings.redis_url) {
        auto ep = store::redis::parse_redis_url(*settings.redis_url);
        if (!ep) {
            spdlog::error("{}", ep.error().detail);
            return 1;
        }
        ep->tls_options = tls;  // rediss://
        redis_endpoint = *ep;
    }
    std::unique_ptr<store::memory::MemoryStore> memory;
    const bool uses_redis = redis_endpoint || cluster_endpoint;
    if (!uses_redis) memory = std::make_unique<store::memory::MemoryStore>(clock, settings.memory_max_keys);

    service::Metrics metrics;
    if (memory) {
        metrics.set_memory_store_stats([&memory] {
            return service::MemoryStoreStats{memory->key_count(), memory->evictions()};
        });
    }
    http::RouterOptions router_options;
    router_options.version = RATELIMITD_VERSION;
    router_options.store_name = cluster_endpoint ? "redis-cluster" : redis_endpoint ? "redis" : "embedded";
    router_options.admin_token = settings.admin_token;
    router_options.access_log = settings.access_log == "all"      ? http::AccessLogMode::all
                                : settings.access_log == "denied" ? http::AccessLogMode::denied
                                                                  : http::AccessLogMode::off;
    router_options.access_log_sample = settings.access_log_sample;
    router_options.hash_secret = settings.hash_secret;
    if (!settings.hash_secret && !registry.current()->hash_secret &&
        policy::uses_hashed_identity(*registry.current())) {
        spdlog::warn("no hash_secret in the config and no RATELIMITD_HASH_SECRET: API keys are hashed with a "
                     "random per-process key, so one key is a different tenant on each ratelimitd instance "
                     "and after every restart; set the same secret everywhere for shared limits");
    }

    // One denial cache for the process: a key denied on one thread is denied on all.
    store::DenialCache denial_cache;
    const std::string instance_id = random_instance_id();
    std::vector<std::unique_ptr<Worker>> workers;
    std::vector<http::Lane*> lanes;
    for (int i = 0; i < settings.threads; ++i) {
        auto w = std::make_unique<Worker>();
        w->ioc.emplace(1);
        w->work.emplace(w->ioc->get_executor());
        store::Store* store = memory.get();
        // sliding-log members must be unique across threads too
        const std::string thread_instance = instance_id + "." + std::to_string(i);
        const store::redis::Coalescing coalescing{.enabled = settings.coalescing};
        if (redis_endpoint) {
            w->redis = std::make_unique<store::redis::RedisStore>(w->ioc->get_executor(), *redis_endpoint,
                                                                  settings.store_timeout, thread_instance, 2,
                                                                  coalescing, sentinel);
            store = w->redis.get();
            if (settings.denial_cache) w->redis->on_reconnected([&denial_cache] { denial_cache.clear(); });
        } else if (cluster_endpoint) {
            w->cluster = std::make_unique<store::redis::cluster::ClusterStore>(
                w->ioc->get_executor(), *cluster_endpoint, settings.store_timeout, thread_instance, 2, coalescing);
            store = w->cluster.get();
            if (settings.denial_cache) w->cluster->on_reconnected([&denial_cache] { denial_cache.clear(); });
        }
        if (uses_redis && settings.denial_cache) {
            w->cached = std::make_unique<store::CachingStore>(*store, denial_cache);
            store = w->cached.get();
        }
        w->service = std::make_unique<service::CheckService>(registry, *store, metrics);
        w->router = std::make_unique<http::Router>(*w->service, router_options);
        w->lane = std::make_unique<http::Lane>(*w->ioc, *w->router);
        lanes.push_back(w->lane.get());
        workers.push_back(std::move(w));
    }

    if (redis_endpoint) {
        metrics.set_breaker_gauge([&workers] {
            int open = 0;
            for (auto& w : workers) open += w->redis->breaker_open() ? 1 : 0;
            return open;
        });
        metrics.set_coalescing_stats([&workers] {
            service::CoalescingStats c;
            for (auto& w : workers) {
                c.script_calls += w->redis->batches_sent();
                c.checks += w->redis->checks_batched();
            }
            return c;
        });
    } else if (cluster_endpoint) {
        metrics.set_breaker_gauge([&workers] {
            int open = 0;
            for (auto& w : workers) open += w->cluster->breaker_open() ? 1 : 0;
            return open;
        });
        metrics.set_coalescing_stats([&workers] {
            service::CoalescingStats c;
            for (auto& w : workers) {
                c.script_calls += w->cluster->batches_sent();
                c.checks += w->cluster->checks_batched();
            }
            return c;
        });
        metrics.set_cluster_redirects([&workers] {
            service::ClusterRedirects r;
            for (auto& w : workers) {
                const auto one = w->cluster->redirects();
                r.moved += one.moved;
                r.ask += one.ask;
            }
            return r;
        });
    }

    // The main thread accepts connections and handles signals; workers serve sessions.
    net::io_context main_ioc(1);
    std::optional<http::Server> server;
    try {
        const auto address = net::ip::make_address(settings.listen_host);
        http::ServerLimits limits;
        limits.request_timeout = settings.request_timeout;
        limits.max_connections = settings.max_connections;
        limits.max_requests_per_connection = settings.max_requests_per_connection;
        server.emplace(main_ioc, tcp::endpoint(address, settings.listen_port), lanes, limits);
    } catch (const boost::system::system_error& e) {
        spdlog::error("cannot listen on {}:{}: {}", settings.listen_host, settings.listen_port,
                      e.code().message());
        return 1;
    }

    for (auto& w : workers) {
        w->thread = std::thread([ioc = &*w->ioc] { ioc->run(); });
    }

    if (sentinel) {
        // Runs on the monitor's thread; each store reconnects on its own thread.
        sentinel->start([&workers](const store::redis::Endpoint&) {
            for (auto& w : workers) net::post(*w->ioc, [w = w.get()] { w->redis->retarget(); });
        });
    }
    // Resets on any sidecar sharing the store reach this one's denial cache (contract §8).
    std::atomic<std::size_t> reset_seed{0};  // a cluster: any node hears every PUBLISH
    std::optional<store::redis::ResetSubscriber> reset_subscriber;
    if (uses_redis && settings.denial_cache) {
        reset_subscriber.emplace(store::redis::ResetSubscriber::Hooks{
            .target = [&]() -> std::optional<store::redis::Endpoint> {
                if (sentinel) return sentinel->current();
                if (cluster_endpoint) return cluster_endpoint->seeds[reset_seed % cluster_endpoint->seeds.size()];
                return redis_endpoint;
            },
            .channel = [&registry] { return store::redis::reset_channel(registry.current()->prefix); },
            .on_reset = [&denial_cache](const std::string& key) { denial_cache.forget(key); },
            .on_subscribed = [&denial_cache] { denial_cache.clear(); },
            .on_failure = [&reset_seed] { ++reset_seed; },
        });
        reset_subscriber->start();
    }
    // Called after the pools have had their chance to connect: a cluster names its primaries.
    const auto store_description = [&] {
        if (sentinel) return sentinel->describe();
        if (redis_endpoint) return redis_endpoint->describe();
        if (cluster_endpoint) return workers.front()->cluster->describe();
        return std::string("embedded");
    };

    if (uses_redis) {
        // Give the pools a moment to connect so the first checks do not fail open needlessly;
        // a Redis that is down does not stop the service from starting (/readyz says 503).
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        auto all_ready = [&] {
            for (auto& w : workers) {
                if (w->redis ? !w->redis->any_ready() : !w->cluster->any_ready()) return false;
            }
            return true;
        };
        while (!all_ready() && std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (!all_ready()) {
            spdlog::warn("redis at {} is not answering yet; checks answer by each policy's "
                         "on_store_error until it does", store_description());
        }
    } else {
        spdlog::warn("no Redis URL given: using the embedded store; limits are per instance, "
                     "not shared with other ratelimitd instances");
    }

    server->start();
    spdlog::info("listening on {} store={} policies={} threads={}", format_endpoint(server->local_endpoint()),
                 store_description(),
                 registry.current()->policies.size(), settings.threads);
    if (!settings.admin_token && !http::is_loopback_address(server->local_endpoint().address().to_string())) {
        spdlog::warn("listening on a non-loopback address without an admin token: /v1/policies, /v1/peek and "
                     "/v1/reset answer only loopback peers (others get 403 admin_disabled); set "
                     "RATELIMITD_ADMIN_TOKEN to call them from elsewhere");
    }

    // The embedded store drops idle keys from a timer on this (accept) thread, so its memory
    // follows the live tenants even on shards that get no more checks.
    std::optional<MemorySweeper> sweeper;
    if (memory) {
        sweeper.emplace(main_ioc.get_executor(), *memory);
        sweeper->start();
    }

    net::signal_set signals(main_ioc, SIGINT, SIGTERM, SIGHUP);
    net::steady_timer drain_timer(main_ioc);
    std::chrono::steady_clock::time_point drain_started;
    bool draining = false;

    std::function<void()> poll_drain = [&] {
        if (server->live_sessions() == 0 ||
            std::chrono::steady_clock::now() - drain_started > drain_deadline) {
            main_ioc.stop();
            return;
        }
        drain_timer.expires_after(std::chrono::milliseconds(10));
        drain_timer.async_wait([&](boost::system::error_code) { poll_drain(); });
    };

    std::function<void(boost::system::error_code, int)> on_signal = [&](boost::system::error_code ec, int sig) {
        if (ec) return;
        if (sig == SIGHUP) {
            try {
                auto next = policy::load_config(settings.config_path);
                if (cluster_endpoint) {
                    if (auto refusal = cluster_refusal(next.registry)) {
                        metrics.count_reload(false);
                        spdlog::error("reload refused, the previous config keeps serving: {}: {}",
                                      settings.config_path, *refusal);
                        signals.async_wait(on_signal);
                        return;
                    }
                }
                const auto count = next.registry.policies.size();
                registry.replace(std::make_shared<const policy::Registry>(std::move(next.registry)));
                metrics.count_reload(true);
                spdlog::info("reloaded {}: policies={}", settings.config_path, count);
            } catch (const policy::ConfigError& e) {
                metrics.count_reload(false);
                spdlog::error("reload refused, the previous config keeps serving: {}", e.what());
            } catch (const std::exception& e) {
                // Anything else (out of memory swapping the registry...) must not end the process
                // that serves the old config: an exception here would leave the io_context's run().
                metrics.count_reload(false);
                spdlog::error("reload refused, the previous config keeps serving: {}: unexpected failure ({})",
                              settings.config_path, e.what());
            }
        } else if (!draining) {
            draining = true;
            spdlog::info("received {}: draining connections", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            drain_started = std::chrono::steady_clock::now();
            server->drain();
            poll_drain();
        }
        signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);

    // A changed file (an edit, a ConfigMap update) is reloaded by SIGHUP's own path, so both
    // refuse and apply exactly alike.
    std::optional<ConfigWatcher> watcher;
    if (settings.watch_config && !settings.config_path.empty()) {
        watcher.emplace(main_ioc.get_executor(), settings.config_path, [&settings] {
            spdlog::info("{} changed on disk: reloading", settings.config_path);
            ::kill(::getpid(), SIGHUP);
        });
        if (!watcher->start()) {
            spdlog::warn("cannot watch {} for changes (inotify); reload it with SIGHUP", settings.config_path);
        }
    }

    main_ioc.run();
    // A drain that finds no session stops main_ioc before the acceptor's close (posted) has
    // run; the pending accept names a lane's io_context, so finish it now, while the lanes
    // still exist, instead of at main_ioc's destruction after theirs.
    main_ioc.restart();
    server->drain();
    main_ioc.poll();
    if (sweeper) sweeper->stop();

    if (reset_subscriber) reset_subscriber->stop();
    if (sentinel) sentinel->stop();  // no more retargets posted to the workers
    // Let each worker finish its own shutdown on its own thread, then join.
    for (auto& w : workers) {
        net::post(*w->ioc, [w = w.get()] {
            if (w->redis) w->redis->stop();
            if (w->cluster) w->cluster->stop();
            w->work.reset();
            w->ioc->stop();
        });
    }
    for (auto& w : workers) w->thread.join();
    const auto left = server->live_sessions();
    server.reset();
    workers.clear();
    spdlog::info("stopped{}", left ? fmt::format(" ({} connections cut at the drain deadline)", left) : "");
    return 0;
}

}  // namespace ratelimitd::app
