// RLQS shares kept in Redis by lua/rlqs_share.lua: one EVALSHA per bucket, one pipeline per report.
#pragma once

#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/share_ledger.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

namespace ratelimitd::store::redis {

class BlockingClient;

/// Blocking connections of its own, taken from a small pool by each report on the gRPC thread
/// that read it: a report waits at most `timeout` for Redis, then take() gives up and the
/// connection is dropped (the next report connects afresh).
/// @par Thread Safety
/// take() may be called from any thread; each call uses a connection alone.
class RedisShareLedger final : public ShareLedger {
public:
    /// Most live Envoys the script keeps per bucket; past it new ids get the floor only.
    static constexpr int max_live_envoys = 256;
    /// Connections kept between reports; more are made when more reports run at once.
    static constexpr std::size_t pooled_connections = 4;

    RedisShareLedger(Endpoint endpoint, std::chrono::milliseconds timeout);
    ~RedisShareLedger() override;

    std::optional<std::vector<ShareGrant>> take(const std::vector<ShareAsk>& asks) override;

private:
    /// A connected client (AUTH and SELECT done), or null with the reason logged.
    std::unique_ptr<BlockingClient> connected();
    std::optional<std::vector<ShareGrant>> run(BlockingClient& client, const std::vector<ShareAsk>& asks);

    Endpoint endpoint_;
    std::chrono::milliseconds timeout_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<BlockingClient>> idle_;
};

}  // namespace ratelimitd::store::redis
