// ClusterBackend: one ClusterStore per server thread, the shared denial cache, the config rule;
// the registration of redis-cluster://.
#include "ratelimitd/store/redis/cluster/cluster_backend.hpp"
#include "ratelimitd/store/redis/cluster/cluster_rules.hpp"
#include "ratelimitd/store/redis/first_connections.hpp"

#include <string>
#include <utility>

namespace ratelimitd::store::redis::cluster {
namespace {

constexpr std::string_view cluster_schemes[] = {"redis-cluster://", "rediss-cluster://"};

}  // namespace

// Its lines end --help's Redis forms, so the TLS line of all three is here.
const BackendKind cluster_backend_kind{
    .name = "redis-cluster",
    .schemes = cluster_schemes,
    .help_position = 30,
    .usage = "  redis-cluster://[[user]:password@]host:port[,host:port...]      a Redis Cluster\n"
             "  rediss://, rediss-sentinel://, rediss-cluster://                the same over TLS\n",
    .refusal = &cluster_refusal,
    .open = &ClusterBackend::open,
};

result<std::unique_ptr<Backend>> ClusterBackend::open(std::string_view url, BackendOptions options) {
    auto endpoint = parse_cluster_url(url);
    if (!endpoint) return endpoint.error();
    for (auto& seed : endpoint->seeds) seed.tls_options = options.tls;  // rediss-cluster://
    return std::unique_ptr<Backend>(std::make_unique<ClusterBackend>(std::move(*endpoint), std::move(options)));
}

ClusterBackend::ClusterBackend(ClusterEndpoint endpoint, BackendOptions options)
    : endpoint_(std::move(endpoint)), options_(std::move(options)), denials_(options_.denial_cache, options_.key_prefix) {}

ClusterBackend::~ClusterBackend() { stop(); }

std::optional<std::string> ClusterBackend::refusal(const policy::Registry& registry) const {
    return cluster_refusal(registry);
}

Store& ClusterBackend::add_thread(boost::asio::any_io_executor thread) {
    // sliding-log members must be unique across threads too
    const std::string instance = options_.instance_id + "." + std::to_string(stores_.size());
    const Coalescing coalescing{.enabled = options_.coalescing};
    stores_.push_back(
        std::make_unique<ClusterStore>(std::move(thread), endpoint_, options_.timeout, instance, 2, coalescing,
                                       options_.state_layout));
    if (denials_.enabled()) stores_.back()->on_reconnected(denials_.reconnected_hook());
    return denials_.front(*stores_.back());
}

void ClusterBackend::start(boost::asio::any_io_executor /*main*/) {
    denials_.start([this]() -> std::optional<Endpoint> { return endpoint_.seeds[reset_seed_ % endpoint_.seeds.size()]; },
                   [this] { ++reset_seed_; });
    await_first_connections([this] { return all_connected(); }, [this] { return describe(); });
}

void ClusterBackend::stop() { denials_.stop(); }

void ClusterBackend::stop_thread(std::size_t index) { stores_.at(index)->stop(); }

BackendStats ClusterBackend::stats() const {
    BackendStats s;
    s.batching = BackendStats::Batching{};
    s.redirects = BackendStats::Redirects{};
    for (const auto& store : stores_) {
        s.open_breakers += store->breaker_open() ? 1 : 0;
        s.batching->script_calls += store->batches_sent();
        s.batching->checks += store->checks_batched();
        const auto r = store->redirects();
        s.redirects->moved += r.moved;
        s.redirects->ask += r.ask;
    }
    return s;
}

std::string ClusterBackend::describe() const {
    return stores_.empty() ? endpoint_.describe() : stores_.front()->describe();
}

bool ClusterBackend::all_connected() const {
    for (const auto& store : stores_) {
        if (!store->any_ready()) return false;
    }
    return true;
}

}  // namespace ratelimitd::store::redis::cluster
