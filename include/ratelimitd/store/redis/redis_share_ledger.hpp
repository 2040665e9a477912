// RLQS shares kept in one Redis by lua/rlqs_share.lua: one EVALSHA per bucket, one pipeline
// per report; the Redis a fixed endpoint or the primary a Sentinel names.
#pragma once

#include "ratelimitd/core/warning_gate.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/endpoint_source.hpp"
#include "ratelimitd/store/share_ledger.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
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
    /// Connections kept between reports; more are made when more reports run at once.
    static constexpr std::size_t pooled_connections = 4;
    /// A Redis that does not answer is logged once, then at most once per this.
    static constexpr std::chrono::seconds warning_interval{10};

    RedisShareLedger(Endpoint endpoint, std::chrono::milliseconds timeout);
    /// Follows `source` (a SentinelMonitor): each new connection goes to the endpoint it names
    /// then, pooled connections to another are dropped, and a READONLY reply makes it look again.
    RedisShareLedger(std::shared_ptr<EndpointSource> source, std::chrono::milliseconds timeout);
    ~RedisShareLedger() override;

    std::optional<std::vector<ShareGrant>> take(const std::vector<ShareAsk>& asks) override;

private:
    /// A connected client to the endpoint in force (AUTH and SELECT done), or null (logged).
    std::unique_ptr<BlockingClient> connected();
    std::optional<std::vector<ShareGrant>> run(BlockingClient& client, const std::vector<ShareAsk>& asks);
    /// Logs a failure, at most once per warning_interval.
    void warn(const std::string& why);
    [[nodiscard]] std::string describe() const;

    std::optional<Endpoint> endpoint_;        ///< fixed, or
    std::shared_ptr<EndpointSource> source_;  ///< asked before each connect
    std::chrono::milliseconds timeout_;
    WarningGate warnings_{warning_interval};
    std::mutex mutex_;
    std::string pooled_for_;  ///< describe() of the endpoint the idle connections reach
    std::vector<std::unique_ptr<BlockingClient>> idle_;
};

}  // namespace ratelimitd::store::redis
