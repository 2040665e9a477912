// GrpcServer: ServerBuilder with both services, the receive cap, and an orderly stop.
#include "ratelimitd/grpc/grpc_server.hpp"

#include "ratelimitd/grpc/health_service.hpp"
#include "ratelimitd/grpc/rate_limit_service.hpp"

#include <grpcpp/grpcpp.h>

namespace ratelimitd::rls {

namespace {

std::string join_host_port(const std::string& host, unsigned short port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

result<std::unique_ptr<GrpcServer>> GrpcServer::start(const std::string& host, unsigned short port,
                                                       std::vector<ServiceLane> lanes, GrpcMetrics& metrics,
                                                       GrpcServerOptions options) {
    std::unique_ptr<GrpcServer> s(new GrpcServer());
    s->lanes_ = std::make_unique<LaneRing>(std::move(lanes));
    s->rls_ = std::make_unique<RateLimitService>(*s->lanes_, metrics, RequestLimits{}, options.headers);
    s->health_ = std::make_unique<HealthService>(*s->lanes_, metrics);
    grpc::ServerBuilder builder;
    int bound_port = 0;
    // Plaintext, as Envoy's rate limit filter talks to a sidecar or an in-cluster service;
    // TLS, where wanted, is the mesh's (docs/envoy.md).
    builder.AddListeningPort(join_host_port(host, port), grpc::InsecureServerCredentials(), &bound_port);
    // gRPC sets SO_REUSEPORT by default: a second process would then bind a taken port and
    // share its calls, instead of failing at start as the HTTP listener does.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    builder.SetMaxReceiveMessageSize(options.max_receive_bytes);
    builder.RegisterService(s->rls_.get());
    builder.RegisterService(s->health_.get());
    s->server_ = builder.BuildAndStart();
    if (!s->server_ || bound_port == 0) {
        return Problem{errc::invalid_request, "cannot listen on " + join_host_port(host, port) + " (grpc_listen)"};
    }
    s->address_ = join_host_port(host, static_cast<unsigned short>(bound_port));
    return s;
}

GrpcServer::~GrpcServer() { stop(std::chrono::milliseconds(0)); }

void GrpcServer::stop(std::chrono::milliseconds grace) {
    if (stopped_ || !server_) return;
    stopped_ = true;
    // Shutdown refuses new calls at once and returns when every call in flight has finished
    // (our lanes Finish each within the store deadline) or `grace` has passed.
    server_->Shutdown(std::chrono::system_clock::now() + grace);
    server_->Wait();
}

}  // namespace ratelimitd::rls
