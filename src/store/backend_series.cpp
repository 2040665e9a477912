// The series of BackendStats, the default of Backend::metric_families: names, types and help
// texts of the store's part of /metrics.
#include "ratelimitd/store/backend.hpp"

#include <utility>

namespace ratelimitd::store {
namespace {

MetricFamily family(std::string name, std::string type, std::string help, std::vector<MetricSample> samples) {
    return MetricFamily{std::move(name), std::move(type), std::move(help), std::move(samples)};
}

void add_connections(std::vector<MetricFamily>& out, const BackendStats::Connections& c) {
    out.push_back(family("ratelimitd_redis_connections", "gauge",
                         "Connections to Redis of every server thread, by state.",
                         {{R"(state="connected")", c.connected},
                          {R"(state="connecting")", c.connecting},
                          {R"(state="disconnected")", c.disconnected}}));
}

void add_batching(std::vector<MetricFamily>& out, const BackendStats::Batching& b) {
    out.push_back(family("ratelimitd_redis_check_calls_total", "counter",
                         "Script calls sent to Redis for single checks; with coalescing, one per batch.",
                         {{"", b.script_calls}}));
    out.push_back(family("ratelimitd_redis_coalesced_checks_total", "counter",
                         "Single checks those calls carried (divided by the calls: the mean batch size).",
                         {{"", b.checks}}));
}

void add_redirects(std::vector<MetricFamily>& out, const BackendStats::Redirects& r) {
    out.push_back(family("ratelimitd_redis_cluster_redirects_total", "counter",
                         "MOVED and ASK redirects followed to another Redis Cluster node.",
                         {{R"(kind="moved")", r.moved}, {R"(kind="ask")", r.ask}}));
}

void add_keys(std::vector<MetricFamily>& out, const BackendStats::Keys& k) {
    out.push_back(family("ratelimitd_memory_store_keys", "gauge",
                         "Keys held by the embedded store (expired ones not yet swept included).", {{"", k.keys}}));
    out.push_back(family("ratelimitd_memory_store_evictions_total", "counter",
                         "Live keys the embedded store dropped to stay within memory_max_keys.",
                         {{"", k.evictions}}));
}

}  // namespace

std::vector<MetricFamily> metric_families_of(const BackendStats& stats) {
    std::vector<MetricFamily> out;
    out.push_back(family("ratelimitd_circuit_breakers_open", "gauge",
                         "Server threads whose circuit breaker holds checks back from the store.",
                         {{"", static_cast<std::uint64_t>(stats.open_breakers)}}));
    if (stats.batching) add_batching(out, *stats.batching);
    if (stats.redirects) add_redirects(out, *stats.redirects);
    if (stats.connections) add_connections(out, *stats.connections);
    if (stats.keys) add_keys(out, *stats.keys);
    return out;
}

std::vector<MetricFamily> Backend::metric_families() const { return metric_families_of(stats()); }

}  // namespace ratelimitd::store
