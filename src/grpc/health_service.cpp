// HealthService: ask the store (and, in ERL mode, the registry) on a lane, Finish from there.
#include "ratelimitd/grpc/health_service.hpp"

#include "ratelimitd/grpc/service_lane.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <chrono>
#include <exception>
#include <string>

namespace ratelimitd::rls {

namespace net = boost::asio;
using grpc::health::v1::HealthCheckResponse;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* rls_service_name = "envoy.service.ratelimit.v3.RateLimitService";
// envoyproxy/ratelimit registers its health under this name; probes written for it ask for it.
constexpr const char* erl_service_name = "ratelimit";

bool has_domain(const road::Road& road) {
    const auto registry = road.registry();
    return registry->domains != nullptr && !registry->domains->by_name.empty();
}

net::awaitable<void> check(const road::Road& road, bool needs_domain, HealthCheckResponse* response,
                           grpc::ServerUnaryReactor* reactor, GrpcMetrics& metrics, Clock::time_point arrived) {
    bool ready = !needs_domain || has_domain(road);
    try {
        if (ready) ready = co_await road.ready();
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
    const std::string& name = request->service();
    if (!name.empty() && name != rls_service_name && name != erl_service_name) {
        metrics_.count_call(GrpcMethod::health_check, static_cast<int>(grpc::StatusCode::NOT_FOUND),
                            Clock::now() - arrived);
        reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service"));
        return reactor;
    }
    const auto& lane = lanes_.next();
    net::co_spawn(lane.executor, check(lane.road, needs_domain_, response, reactor, metrics_, arrived),
                  net::detached);
    return reactor;
}

}  // namespace ratelimitd::rls
