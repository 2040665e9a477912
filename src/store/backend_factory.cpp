// make_backend: one case per store URL scheme. A new backend adds its case here.
#include "ratelimitd/store/backend_factory.hpp"
#include "ratelimitd/store/memory/memory_backend.hpp"
#include "ratelimitd/store/redis/cluster/cluster_backend.hpp"
#include "ratelimitd/store/redis/redis_backend.hpp"

#include <utility>

namespace ratelimitd::store {

result<std::unique_ptr<Backend>> make_backend(const std::optional<std::string>& url, BackendOptions options) {
    if (!url) return std::unique_ptr<Backend>(std::make_unique<memory::MemoryBackend>(options));
    if (redis::is_sentinel_url(*url)) return redis::RedisBackend::open_sentinel(*url, std::move(options));
    if (redis::cluster::is_cluster_url(*url)) return redis::cluster::ClusterBackend::open(*url, std::move(options));
    return redis::RedisBackend::open(*url, std::move(options));  // redis://, or an error naming the URL
}

}  // namespace ratelimitd::store
