// open_rlqs_shares: the share ledger on the store's Redis, whichever way it is reached.
#include "ratelimitd/app/rlqs_shares.hpp"

#include "ratelimitd/store/redis/cluster/cluster_endpoint.hpp"
#include "ratelimitd/store/redis/cluster/cluster_share_ledger.hpp"
#include "ratelimitd/store/redis/redis_share_ledger.hpp"
#include "ratelimitd/store/redis/sentinel.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::app {

namespace {

store::TlsOptions redis_tls(const Settings& settings) {
    return {settings.redis_tls_ca, settings.redis_tls_cert, settings.redis_tls_key, settings.redis_tls_server_name,
            settings.redis_tls_insecure_skip_verify};
}

/// The ledger follows the primary through a SentinelMonitor of its own (its own thread and
/// connections to the sentinels), as each store does.
std::shared_ptr<store::ShareLedger> sentinel_shares(const Settings& settings) {
    auto url = store::redis::parse_sentinel_url(*settings.redis_url);
    if (!url) return nullptr;  // the store refuses the URL with its reason
    url->tls_options = redis_tls(settings);
    auto monitor = std::make_shared<store::redis::SentinelMonitor>(*url);
    monitor->poll_once();  // a primary now if a sentinel names one; else the poller finds it
    monitor->start({});
    return std::make_shared<store::redis::RedisShareLedger>(std::move(monitor), settings.store_timeout);
}

std::shared_ptr<store::ShareLedger> cluster_shares(const Settings& settings) {
    auto endpoint = store::redis::cluster::parse_cluster_url(*settings.redis_url);
    if (!endpoint) return nullptr;
    for (auto& seed : endpoint->seeds) seed.tls_options = redis_tls(settings);
    return std::make_shared<store::redis::cluster::ClusterShareLedger>(std::move(*endpoint), settings.store_timeout);
}

}  // namespace

std::shared_ptr<store::ShareLedger> open_rlqs_shares(const Settings& settings) {
    if (!settings.redis_url || !settings.grpc_listen) return nullptr;
    if (store::redis::is_sentinel_url(*settings.redis_url)) return sentinel_shares(settings);
    if (store::redis::cluster::is_cluster_url(*settings.redis_url)) return cluster_shares(settings);
    auto endpoint = store::redis::parse_redis_url(*settings.redis_url);
    if (!endpoint) {
        spdlog::info("rlqs: budgets are each replica's own: shares across the fleet need a Redis store");
        return nullptr;
    }
    endpoint->tls_options = redis_tls(settings);
    return std::make_shared<store::redis::RedisShareLedger>(std::move(*endpoint), settings.store_timeout);
}

}  // namespace ratelimitd::app
