// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit over the server threads.
#pragma once

#include "ratelimitd/grpc/grpc_metrics.hpp"
#include "ratelimitd/grpc/lane_ring.hpp"
#include "ratelimitd/grpc/request_codec.hpp"
#include "ratelimitd/grpc/response_headers.hpp"

#include "ratelimitd/stats/erl_stats.hpp"
#include "ratelimitd/trace/tracer.hpp"

#include "envoy/service/ratelimit/v3/rls.grpc.pb.h"

namespace ratelimitd::rls {

/// Serves ShouldRateLimit with gRPC's callback API without blocking any thread: the call
/// arrives on a gRPC thread, is posted to the next server thread (LaneRing), where it is
/// decoded, planned on the registry snapshot of that moment and decided by that thread's
/// CheckService (road::Road::decide with road::Ask::rls, every door's road), and finished from there. Bad input (decode or plan Problems) answers
/// INVALID_ARGUMENT naming what was wrong, and charges nothing.
class RateLimitService final : public envoy::service::ratelimit::v3::RateLimitService::CallbackService {
public:
    /// `erl_stats`: ERL mode's stats, counted per call when not nullptr (it outlives the service).
    RateLimitService(LaneRing& lanes, GrpcMetrics& metrics, RequestLimits limits = {},
                     ResponseHeaders headers = HeaderSet::ietf, stats::ErlStats* erl_stats = nullptr,
                     const trace::Tracer* tracer = nullptr, std::string trace_store_name = {})
        : lanes_(lanes), metrics_(metrics), limits_(limits), headers_(headers), erl_stats_(erl_stats),
          tracer_(tracer), trace_store_name_(std::move(trace_store_name)) {}

    grpc::ServerUnaryReactor* ShouldRateLimit(grpc::CallbackServerContext* context,
                                              const envoy::service::ratelimit::v3::RateLimitRequest* request,
                                              envoy::service::ratelimit::v3::RateLimitResponse* response) override;

private:
    LaneRing& lanes_;
    GrpcMetrics& metrics_;
    RequestLimits limits_;
    ResponseHeaders headers_;
    stats::ErlStats* erl_stats_;
    const trace::Tracer* tracer_;  ///< null: tracing is off
    std::string trace_store_name_;
};

}  // namespace ratelimitd::rls
