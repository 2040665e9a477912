// HealthService: ask the store on a lane, Finish from there.
#include "ratelimitd/grpc/health_service.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <chrono>
#include <exception>

namespace ratelimitd::rls {

namespace net = boost::asio;
using grpc::health::v1::HealthCheckResponse;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* rls_service_name = "envoy.service.ratelimit.v3.RateLimitService";

net::awaitable<void> check(store::Store& store, HealthCheckResponse* response, grpc::ServerUnaryReactor* reactor,
                           GrpcMetrics& metrics, Clock::time_point arrived) {
    bool ready = false;
    try {
        ready = co_await store.ready();
    } catch (const std::exception&) {
        ready = false;  // a store that cannot even say is not ready
    }
    response->set_status(ready ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING);
    metrics.count_call(GrpcMethod::health_check, 0, Clock::now() - arrived);
    reactor->Finish(grpc::Status::OK);
}

}  // namespace

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const grpc::health::v1::HealthCheckRequest* request,
                                               HealthCheckResponse* response) {
    const auto arrived = Clock::now();
    auto* reactor = context->DefaultReactor();
    if (!request->service().empty() && request->service() != rls_service_name) {
        metrics_.count_call(GrpcMethod::health_check, static_cast<int>(grpc::StatusCode::NOT_FOUND),
                            Clock::now() - arrived);
        reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service"));
        return reactor;
    }
    const auto& lane = lanes_.next();
    net::co_spawn(lane.executor, check(lane.service->store(), response, reactor, metrics_, arrived), net::detached);
    return reactor;
}

}  // namespace ratelimitd::rls
