// QuotaService: a QuotaStream for each StreamRateLimitQuotas call.
#include "ratelimitd/grpc/quota_service.hpp"

#include "ratelimitd/grpc/quota_stream.hpp"

namespace ratelimitd::rls {

grpc::ServerBidiReactor<envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports,
                        envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse>*
QuotaService::StreamRateLimitQuotas(grpc::CallbackServerContext* context) {
    // gRPC names a peer by its address and port: one connection.
    return new QuotaStream(answerer_, peers_, metrics_, roster_, context->peer());
}

}  // namespace ratelimitd::rls
