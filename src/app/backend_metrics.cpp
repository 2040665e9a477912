// report_backend_stats: BackendStats -> the metrics' scrape-time readers.
#include "ratelimitd/app/backend_metrics.hpp"

namespace ratelimitd::app {

void report_backend_stats(service::Metrics& metrics, const store::Backend& backend) {
    // Which parts a backend has never changes; its first stats say which.
    const store::BackendStats has = backend.stats();
    metrics.set_breaker_gauge([&backend] { return backend.stats().open_breakers; });
    if (has.batching) {
        metrics.set_coalescing_stats([&backend] {
            const auto b = backend.stats().batching.value_or(store::BackendStats::Batching{});
            return service::CoalescingStats{b.script_calls, b.checks};
        });
    }
    if (has.redirects) {
        metrics.set_cluster_redirects([&backend] {
            const auto r = backend.stats().redirects.value_or(store::BackendStats::Redirects{});
            return service::ClusterRedirects{r.moved, r.ask};
        });
    }
    if (has.connections) {
        metrics.set_redis_connections([&backend] {
            const auto c = backend.stats().connections.value_or(store::BackendStats::Connections{});
            return service::RedisConnections{c.connected, c.connecting, c.disconnected};
        });
    }
    if (has.keys) {
        metrics.set_memory_store_stats([&backend] {
            const auto k = backend.stats().keys.value_or(store::BackendStats::Keys{});
            return service::MemoryStoreStats{k.keys, k.evictions};
        });
    }
}

}  // namespace ratelimitd::app
