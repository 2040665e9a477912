// The seam between the app and the stores it can run on: one Backend per process, made from
// the store URL by make_backend() (backend_factory.hpp), holding one Store per server thread.
#pragma once

#include "ratelimitd/core/clock.hpp"
#include "ratelimitd/core/metric_family.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/store/state_layout.hpp"
#include "ratelimitd/store/store.hpp"
#include "ratelimitd/store/tls_options.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::store {

/// What a backend reports at each metrics scrape, summed over server threads. A part a
/// backend does not have is empty, and its series are not rendered (metric_families()).
struct BackendStats {
    struct Batching {
        std::uint64_t script_calls = 0;  ///< calls sent for single checks: one per batch
        std::uint64_t checks = 0;        ///< checks those calls carried
    };
    struct Redirects {
        std::uint64_t moved = 0;
        std::uint64_t ask = 0;
    };
    struct Keys {
        std::uint64_t keys = 0;       ///< held, expired ones not yet swept included
        std::uint64_t evictions = 0;  ///< live keys dropped to stay within the cap
    };
    struct Connections {
        std::uint64_t connected = 0;
        std::uint64_t connecting = 0;
        std::uint64_t disconnected = 0;
    };
    int open_breakers = 0;              ///< server threads whose circuit breaker is open
    std::optional<Connections> connections;  ///< a Redis store's connections by state
    std::optional<Batching> batching;   ///< a Redis store's coalescing
    std::optional<Redirects> redirects; ///< a Redis Cluster's MOVED/ASK
    std::optional<Keys> keys;           ///< the embedded store's size
};

/// The series of `stats`, in exposition order: ratelimitd_circuit_breakers_open always, then
/// the coalescing, the Cluster redirects, the Redis connections and the embedded store's keys,
/// each when present (backend_series.cpp).
std::vector<MetricFamily> metric_families_of(const BackendStats& stats);

/// What every backend is built from, besides its URL (the process settings that concern stores).
struct BackendOptions {
    const Clock* clock = nullptr;            ///< the embedded store's time; outlives the backend
    std::chrono::milliseconds timeout{50};   ///< per store call
    std::string instance_id;                 ///< random per process: unique sliding-log members
    bool denial_cache = true;                ///< a remote store: cache denials in front of it
    bool coalescing = true;                  ///< a Redis store: batch concurrent checks
    std::size_t memory_max_keys = 1'000'000; ///< the embedded store's cap; 0: none
    TlsOptions tls;                          ///< rediss:// URLs: trust, client certificate, name
    StateLayout state_layout = StateLayout::string;  ///< a Redis store: how token buckets are written
    /// The registry's key prefix now (a remote store hears resets on a channel named by it).
    std::function<std::string()> key_prefix = [] { return std::string(); };
};

/// A store kind with its lifecycle: the Store of each server thread, what those stores share
/// (connections' follow-up, caches, timers) and what the metrics read.
///
/// Order of use: add_thread() once per server thread, then start(), then stop() and
/// stop_thread() for every thread (on that thread), then destruction while every thread's
/// io_context still exists (a store may free I/O objects bound to it).
/// @par Thread Safety
/// add_thread, start, stop and destruction on the main thread; stop_thread on the thread the
/// store runs on; stats(), metric_families() and describe() from any thread.
class Backend {
public:
    virtual ~Backend() = default;

    /// "embedded", "redis", "redis-cluster": the store label of ratelimitd_build_info.
    virtual std::string_view kind() const noexcept = 0;

    /// Why `registry` cannot run on this store, or nothing; asked at start and on each reload.
    virtual std::optional<std::string> refusal(const policy::Registry& /*registry*/) const {
        return std::nullopt;
    }

    /// Makes the store of the next server thread (0, 1, ...), bound to that thread's executor.
    /// The reference stays valid until the backend is destroyed.
    virtual Store& add_thread(boost::asio::any_io_executor thread) = 0;

    /// Starts what the threads' stores share, once their threads run; `main` is the thread
    /// that accepts connections. A remote store gets a moment to connect (so the first checks
    /// do not fail open needlessly), and a warning names it when it does not answer yet.
    virtual void start(boost::asio::any_io_executor main) = 0;

    /// Stops what start() started; afterwards nothing is posted to the server threads.
    virtual void stop() = 0;

    /// Stops the I/O of thread `index`'s store. Runs on that thread.
    virtual void stop_thread(std::size_t index) = 0;

    virtual BackendStats stats() const = 0;

    /// The series this backend adds to /metrics, read at each scrape (from any thread). By
    /// default those of stats() (backend_series.cpp): the open breakers always, then each part
    /// the backend has. A backend with series of its own overrides it; Metrics renders
    /// whatever it is given.
    virtual std::vector<MetricFamily> metric_families() const;

    /// For the log lines, e.g. "redis://127.0.0.1:6379/0".
    virtual std::string describe() const = 0;
};

}  // namespace ratelimitd::store
