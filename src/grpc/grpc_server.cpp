// GrpcServer: ServerBuilder with the three services, the receive cap, the connection bounds, our
// own listener, and an orderly stop.
#include "ratelimitd/grpc/grpc_server.hpp"

#include "ratelimitd/core/host_port.hpp"

#include "ratelimitd/grpc/certificate_reloader.hpp"
#include "ratelimitd/grpc/health_service.hpp"
#include "ratelimitd/grpc/quota_service.hpp"
#include "ratelimitd/grpc/rate_limit_service.hpp"
#include "ratelimitd/grpc/tls_credentials.hpp"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <climits>

namespace ratelimitd::rls {

namespace {

int as_channel_ms(std::chrono::milliseconds d) {
    return static_cast<int>(std::min<std::chrono::milliseconds::rep>(d.count(), INT_MAX));
}

// The bounds on each connection's life, as gRPC's channel arguments.
void bound_connections(grpc::ServerBuilder& builder, const GrpcServerOptions& options) {
    // A peer that connects and never completes the TLS handshake (with grpc_tls) and the
    // HTTP/2 preface and SETTINGS is closed.
    builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, as_channel_ms(options.handshake_timeout));
    // No call for this long: GOAWAY, then closed (Envoy opens a new one when it needs it).
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, as_channel_ms(options.idle_timeout));
    // GOAWAY at this age, closed after the grace whatever is in flight: a peer that keeps
    // calling cannot hold a connection forever either.
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, as_channel_ms(options.max_connection_age));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, as_channel_ms(options.max_connection_age_grace));
    // The cap is the listener's (gRPC 1.51 has none); a resource quota's thread limit would
    // only bound the synchronous API's threads, and these services are callback ones.
}

}  // namespace

result<std::unique_ptr<GrpcServer>> GrpcServer::start(boost::asio::any_io_executor accept_executor,
                                                       const std::string& host, unsigned short port,
                                                       std::vector<ServiceLane> lanes, GrpcMetrics& metrics,
                                                       GrpcServerOptions options) {
    if (auto refusal = tls_refusal(options.tls)) return Problem{errc::invalid_request, *refusal};
    std::unique_ptr<GrpcServer> s(new GrpcServer());
    s->lanes_ = std::make_unique<LaneRing>(std::move(lanes));
    s->rls_ = std::make_unique<RateLimitService>(*s->lanes_, metrics, RequestLimits{}, options.headers,
                                                 options.erl_stats, options.tracer, options.trace_store_name);
    s->health_ = std::make_unique<HealthService>(*s->lanes_, metrics, options.health_needs_domain);
    s->quota_ = std::make_unique<QuotaService>(*s->lanes_, metrics.quota(), options.rlqs_shares);
    // The socket is ours (GrpcListener): bound before the server is built, so a taken port
    // fails at start naming the address, as the HTTP listener does.
    auto listener = GrpcListener::bind(std::move(accept_executor), host, port, options.max_connections, metrics);
    if (!listener) return listener.error();
    grpc::ServerBuilder builder;
    // Plaintext by default, as Envoy's rate limit filter talks to a sidecar or an in-cluster
    // service; TLS (and client certificates) with grpc_tls. The connections we hand over go
    // through the credentials' handshake, under the same handshake deadline.
    if (options.tls.enabled) {
        // Checked now and on every change; gRPC only ever sees what passed.
        auto reloader = CertificateReloader::start(options.tls);
        if (!reloader) return reloader.error();
        s->reloader_ = std::move(*reloader);
    }
    auto credentials = make_listener_credentials(options.tls, s->reloader_.get());
    s->certificates_ = std::move(credentials.provider);
    std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor =
        builder.experimental().AddExternalConnectionAcceptor(
            grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, credentials.credentials);
    builder.SetMaxReceiveMessageSize(options.max_receive_bytes);
    bound_connections(builder, options);
    builder.RegisterService(s->rls_.get());
    builder.RegisterService(s->health_.get());
    builder.RegisterService(s->quota_.get());
    s->server_ = builder.BuildAndStart();
    if (!s->server_) return Problem{errc::invalid_request, "cannot start the gRPC server (grpc_listen)"};
    s->listener_ = std::move(*listener);
    s->listener_->start(std::move(acceptor));
    s->address_ = host_port(host, s->listener_->port());
    return s;
}

GrpcServer::~GrpcServer() { stop(std::chrono::milliseconds(0)); }

void GrpcServer::stop(std::chrono::milliseconds grace) {
    if (stopped_ || !server_) return;
    stopped_ = true;
    if (listener_) listener_->stop();
    // Quota streams never end on their own: ended now with OK, Envoy reconnects elsewhere.
    if (quota_) quota_->end_streams();
    // Shutdown refuses new calls at once and returns when every call in flight has finished
    // (our lanes Finish each within the store deadline) or `grace` has passed.
    server_->Shutdown(std::chrono::system_clock::now() + grace);
    server_->Wait();
}

}  // namespace ratelimitd::rls
