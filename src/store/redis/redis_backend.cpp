// RedisBackend: one RedisStore per server thread, Sentinel failover, the shared denial cache;
// the registrations of redis:// and redis-sentinel://.
#include "ratelimitd/store/redis/redis_backend.hpp"
#include "ratelimitd/store/redis/first_connections.hpp"

#include <boost/asio/post.hpp>

#include <string>
#include <utility>

namespace ratelimitd::store::redis {
namespace {

constexpr std::string_view redis_schemes[] = {"redis://", "rediss://"};
constexpr std::string_view sentinel_schemes[] = {"redis-sentinel://", "rediss-sentinel://"};

}  // namespace

const BackendKind redis_backend_kind{
    .name = "redis",
    .schemes = redis_schemes,
    .help_position = 10,  // first: a URL no kind takes is reported by its parser
    .usage = "  redis://[[user]:password@]host[:port][/db]                      one Redis\n",
    .open = &RedisBackend::open,
};

const BackendKind sentinel_backend_kind{
    .name = "redis",
    .schemes = sentinel_schemes,
    .help_position = 20,
    .usage = "  redis-sentinel://[[user]:password@]host[:port][,...]/master[/db]  the primary Sentinel names\n",
    .open = &RedisBackend::open_sentinel,
};

result<std::unique_ptr<Backend>> RedisBackend::open(std::string_view url, BackendOptions options) {
    auto endpoint = parse_redis_url(url);
    if (!endpoint) return endpoint.error();
    endpoint->tls_options = options.tls;  // used when the URL is rediss://
    return std::unique_ptr<Backend>(std::make_unique<RedisBackend>(std::move(*endpoint), nullptr, std::move(options)));
}

result<std::unique_ptr<Backend>> RedisBackend::open_sentinel(std::string_view url, BackendOptions options) {
    auto parsed = parse_sentinel_url(url);
    if (!parsed) return parsed.error();
    parsed->tls_options = options.tls;  // rediss-sentinel://: to the sentinels and the primary
    auto sentinel = std::make_shared<SentinelMonitor>(*parsed);
    sentinel->poll_once();  // a primary now if a sentinel names one; else the poller finds it
    auto endpoint = sentinel->current().value_or(parsed->endpoint_at("127.0.0.1", 6379));
    return std::unique_ptr<Backend>(
        std::make_unique<RedisBackend>(std::move(endpoint), std::move(sentinel), std::move(options)));
}

RedisBackend::RedisBackend(Endpoint endpoint, std::shared_ptr<SentinelMonitor> sentinel, BackendOptions options)
    : endpoint_(std::move(endpoint)),
      sentinel_(std::move(sentinel)),
      options_(std::move(options)),
      denials_(options_.denial_cache, options_.key_prefix) {}

RedisBackend::~RedisBackend() { stop(); }

Store& RedisBackend::add_thread(boost::asio::any_io_executor thread) {
    // sliding-log members must be unique across threads too
    const std::string instance = options_.instance_id + "." + std::to_string(stores_.size());
    const Coalescing coalescing{.enabled = options_.coalescing};
    stores_.push_back(std::make_unique<RedisStore>(thread, endpoint_, options_.timeout, instance, 2, coalescing,
                                                   sentinel_, options_.state_layout));
    executors_.push_back(std::move(thread));
    if (denials_.enabled()) stores_.back()->on_reconnected(denials_.reconnected_hook());
    return denials_.front(*stores_.back());
}

void RedisBackend::start(boost::asio::any_io_executor /*main*/) {
    if (sentinel_) {
        // Runs on the monitor's thread; each store reconnects on its own thread.
        sentinel_->start([this](const Endpoint&) {
            for (std::size_t i = 0; i < stores_.size(); ++i) {
                boost::asio::post(executors_[i], [store = stores_[i].get()] { store->retarget(); });
            }
        });
    }
    denials_.start([this]() -> std::optional<Endpoint> {
        if (sentinel_) return sentinel_->current();
        return endpoint_;
    });
    await_first_connections([this] { return all_connected(); }, [this] { return describe(); });
}

void RedisBackend::stop() {
    denials_.stop();
    if (sentinel_) sentinel_->stop();  // no more retargets posted to the threads
}

void RedisBackend::stop_thread(std::size_t index) { stores_.at(index)->stop(); }

BackendStats RedisBackend::stats() const {
    BackendStats s;
    s.batching = BackendStats::Batching{};
    ConnectionStates states;
    for (const auto& store : stores_) {
        s.open_breakers += store->breaker_open() ? 1 : 0;
        s.batching->script_calls += store->batches_sent();
        s.batching->checks += store->checks_batched();
        store->add_connection_states(states);
    }
    s.connections = BackendStats::Connections{states.connected, states.connecting, states.disconnected};
    return s;
}

std::string RedisBackend::describe() const { return sentinel_ ? sentinel_->describe() : endpoint_.describe(); }

bool RedisBackend::all_connected() const {
    for (const auto& store : stores_) {
        if (!store->any_ready()) return false;
    }
    return true;
}

}  // namespace ratelimitd::store::redis
