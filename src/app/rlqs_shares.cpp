// open_rlqs_shares: a RedisShareLedger on the store's single Redis.
#include "ratelimitd/app/rlqs_shares.hpp"

#include "ratelimitd/store/redis/redis_share_ledger.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::app {

std::shared_ptr<store::ShareLedger> open_rlqs_shares(const Settings& settings) {
    if (!settings.redis_url || !settings.grpc_listen) return nullptr;
    auto endpoint = store::redis::parse_redis_url(*settings.redis_url);
    if (!endpoint) {
        spdlog::info("rlqs: budgets are each replica's own: shares across the fleet need a redis:// or rediss:// store");
        return nullptr;
    }
    endpoint->tls_options = {settings.redis_tls_ca, settings.redis_tls_cert, settings.redis_tls_key,
                             settings.redis_tls_server_name, settings.redis_tls_insecure_skip_verify};
    return std::make_shared<store::redis::RedisShareLedger>(std::move(*endpoint), settings.store_timeout);
}

}  // namespace ratelimitd::app
