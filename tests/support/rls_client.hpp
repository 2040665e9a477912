// A gRPC client of Envoy's rate limit service and grpc.health.v1, built from proto/, for
// the integration tests: what Envoy's rate limit filter sends, over loopback.
#pragma once

#include "envoy/service/ratelimit/v3/rls.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ratelimitd::test {

using RlsRequest = envoy::service::ratelimit::v3::RateLimitRequest;
using RlsResponse = envoy::service::ratelimit::v3::RateLimitResponse;

/// One descriptor: its (key, value) entries and its own hits_addend when set.
struct Descriptor {
    std::vector<std::pair<std::string, std::string>> entries;
    std::optional<std::uint64_t> hits_addend;
};

/// The request message for `domain` and `descriptors`; hits_addend 0 leaves it unset.
RlsRequest rls_request(const std::string& domain, const std::vector<Descriptor>& descriptors,
                       std::uint32_t hits_addend = 0);

/// The "grpc listening on HOST:PORT" port of a ratelimitd log, or 0.
unsigned short grpc_port_from_log(const std::string& log);

/// A channel to 127.0.0.1:`port` with stubs of both services.
class RlsClient {
public:
    explicit RlsClient(unsigned short port);

    /// ShouldRateLimit with a deadline; the status and, when OK, the response.
    grpc::Status call(const RlsRequest& req, RlsResponse& res,
                      std::chrono::milliseconds deadline = std::chrono::milliseconds(5000)) const;
    /// Shorthand: the overall code, or UNKNOWN when the call failed.
    RlsResponse::Code code(const RlsRequest& req) const;
    /// grpc.health.v1.Health/Check for `service`: the status, or nullopt when the call failed.
    std::optional<grpc::health::v1::HealthCheckResponse::ServingStatus> health(const std::string& service = "") const;

private:
    std::shared_ptr<grpc::Channel> channel_;
    std::unique_ptr<envoy::service::ratelimit::v3::RateLimitService::Stub> rls_;
    std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

}  // namespace ratelimitd::test
