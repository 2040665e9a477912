// envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas: the quota
// server of Envoy's rate_limit_quota filter (docs/rlqs.md).
#pragma once

#include "ratelimitd/grpc/lane_ring.hpp"
#include "ratelimitd/grpc/peer_streams.hpp"
#include "ratelimitd/grpc/quota_answerer.hpp"
#include "ratelimitd/grpc/stream_roster.hpp"

#include "envoy/service/rate_limit_quota/v3/rlqs.grpc.pb.h"

#include <cstddef>
#include <memory>

namespace ratelimitd::rls {

/// Holds one QuotaStream per call, at most max_streams_per_connection on one connection.
class QuotaService final : public envoy::service::rate_limit_quota::v3::RateLimitQuotaService::CallbackService {
public:
    /// Envoy opens one stream per filter config and cluster; 16 leave room for many.
    static constexpr std::size_t max_streams_per_connection = 16;

    /// `shares`: the fleet's share ledger (a Redis store), or null (each replica its own budget).
    QuotaService(LaneRing& lanes, QuotaMetrics& metrics, std::shared_ptr<store::ShareLedger> shares = nullptr,
                 QuotaReportBounds bounds = {})
        : metrics_(metrics), answerer_(lanes, metrics, bounds, std::move(shares)), peers_(max_streams_per_connection) {}

    grpc::ServerBidiReactor<envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports,
                            envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse>*
    StreamRateLimitQuotas(grpc::CallbackServerContext* context) override;

    /// Ends every stream with OK, and each later one at once: the server is stopping.
    void end_streams() { roster_.end_all(); }

private:
    QuotaMetrics& metrics_;
    QuotaAnswerer answerer_;
    PeerStreams peers_;
    StreamRoster roster_;
};

}  // namespace ratelimitd::rls
