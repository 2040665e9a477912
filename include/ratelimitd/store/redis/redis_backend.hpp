// The backend of redis:// and redis-sentinel:// URLs.
#pragma once

#include "ratelimitd/store/backend.hpp"
#include "ratelimitd/store/backend_kind.hpp"
#include "ratelimitd/store/redis/redis_store.hpp"
#include "ratelimitd/store/redis/sentinel.hpp"
#include "ratelimitd/store/redis/shared_denial_cache.hpp"

#include <memory>
#include <string_view>
#include <vector>

namespace ratelimitd::store::redis {

/// One RedisStore (pool, breaker, coalescing) per server thread, all behind the process's
/// SharedDenialCache. With a Sentinel, every store follows the primary it names: a failover
/// retargets each store on its own thread.
class RedisBackend final : public Backend {
public:
    /// redis://...; fails naming what is wrong with the URL.
    static result<std::unique_ptr<Backend>> open(std::string_view url, BackendOptions options);
    /// redis-sentinel://...: asks the sentinels once now; without an answer the stores start
    /// at the first sentinel's host and the monitor finds the primary later.
    static result<std::unique_ptr<Backend>> open_sentinel(std::string_view url, BackendOptions options);

    RedisBackend(Endpoint endpoint, std::shared_ptr<SentinelMonitor> sentinel, BackendOptions options);
    ~RedisBackend() override;

    std::string_view kind() const noexcept override { return "redis"; }
    Store& add_thread(boost::asio::any_io_executor thread) override;
    void start(boost::asio::any_io_executor main) override;
    void stop() override;
    void stop_thread(std::size_t index) override;
    BackendStats stats() const override;
    std::string describe() const override;

private:
    bool all_connected() const;

    Endpoint endpoint_;
    std::shared_ptr<SentinelMonitor> sentinel_;  // null without redis-sentinel://
    BackendOptions options_;
    SharedDenialCache denials_;
    std::vector<boost::asio::any_io_executor> executors_;
    std::vector<std::unique_ptr<RedisStore>> stores_;  // destroyed before denials_ (their hooks use it)
};

/// redis:// and rediss://: one Redis.
extern const BackendKind redis_backend_kind;

/// redis-sentinel:// and rediss-sentinel://: the primary the sentinels name.
extern const BackendKind sentinel_backend_kind;

}  // namespace ratelimitd::store::redis
