// grpc.health.v1.Health/Check: SERVING while the store is ready, as /readyz decides.
#pragma once

#include "ratelimitd/grpc/grpc_metrics.hpp"
#include "ratelimitd/grpc/lane_ring.hpp"

#include "grpc/health/v1/health.grpc.pb.h"

namespace ratelimitd::rls {

/// Answers Check for the whole server (""), for the rate limit service by name and for
/// "ratelimit" (the name envoyproxy/ratelimit registers, which its probes ask for): SERVING
/// when a server thread's store says ready (connected, scripts loaded) and, with
/// `needs_domain`, a domain is loaded; NOT_SERVING otherwise; any other service name is
/// NOT_FOUND, as the health protocol says. Asked per call on a lane, so the answer is never
/// staler than the store's own state.
class HealthService final : public grpc::health::v1::Health::CallbackService {
public:
    HealthService(LaneRing& lanes, GrpcMetrics& metrics, bool needs_domain = false)
        : lanes_(lanes), metrics_(metrics), needs_domain_(needs_domain) {}

    grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                    const grpc::health::v1::HealthCheckRequest* request,
                                    grpc::health::v1::HealthCheckResponse* response) override;

private:
    LaneRing& lanes_;
    GrpcMetrics& metrics_;
    bool needs_domain_;
};

}  // namespace ratelimitd::rls
