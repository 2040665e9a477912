// The gRPC server's lifecycle: bind, serve on gRPC's threads, drain and stop.
#pragma once

#include "ratelimitd/trace/tracer.hpp"

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/grpc/grpc_listener.hpp"
#include "ratelimitd/grpc/grpc_metrics.hpp"
#include "ratelimitd/grpc/response_headers.hpp"
#include "ratelimitd/grpc/service_lane.hpp"
#include "ratelimitd/grpc/tls_options.hpp"
#include "ratelimitd/store/share_ledger.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace grpc {
class Server;
namespace experimental {
class CertificateProviderInterface;
}
}  // namespace grpc

namespace ratelimitd::stats {
class ErlStats;
}

namespace ratelimitd::rls {

class CertificateReloader;
class LaneRing;
class RateLimitService;
class QuotaService;
class HealthService;

/// What the server accepts.
struct GrpcServerOptions {
    /// Largest request message; a larger one is refused by gRPC (RESOURCE_EXHAUSTED) before
    /// it is decoded, so it charges nothing. gRPC's own default, which envoyproxy/ratelimit
    /// keeps: a refusal is an error Envoy admits, and a client shapes the size (Envoy's
    /// headers, 60 KiB by default, mapped into at most 64 descriptors stay below 4 MiB).
    int max_receive_bytes = 4 * 1024 * 1024;
    /// The rate-limit fields each answer asks Envoy to add (grpc_x_ratelimit_headers).
    ResponseHeaders headers = HeaderSet::ietf;
    /// Connections open at once; one more is closed at once (grpc_max_connections).
    std::size_t max_connections = 1'000;
    /// To finish TLS (with tls.enabled) and send the HTTP/2 preface and SETTINGS after
    /// connecting (grpc_handshake_timeout).
    std::chrono::milliseconds handshake_timeout{10'000};
    /// A connection without a call for this long gets GOAWAY (grpc_idle_timeout).
    std::chrono::milliseconds idle_timeout{300'000};
    /// A connection this old gets GOAWAY, so Envoy reconnects and load spreads over new
    /// instances (grpc_max_connection_age) ...
    std::chrono::milliseconds max_connection_age{3'600'000};
    /// ... and is closed this long after, whatever is still in flight.
    std::chrono::milliseconds max_connection_age_grace{10'000};
    /// Plaintext unless tls.enabled; the bounds above hold alike (the handshake deadline
    /// covers the TLS handshake too).
    GrpcTlsOptions tls;
    /// ERL mode's stats (envoyproxy/ratelimit's names), counted per call when set.
    stats::ErlStats* erl_stats = nullptr;
    /// HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED (ERL mode): Health/Check answers NOT_SERVING
    /// until a domain is loaded, as /healthcheck answers 500.
    bool health_needs_domain = false;    /// Traces (docs/tracing.md): ShouldRateLimit's server span, parent from the `traceparent`
    /// metadata; null: off.
    const trace::Tracer* tracer = nullptr;
    std::string trace_store_name;  ///< what the span's ratelimit.store names
    /// RLQS budgets split across the fleet (a Redis store); null: each replica its own.
    std::shared_ptr<store::ShareLedger> rlqs_shares;
};

/// Envoy's rate limit service, its rate limit quota service and grpc.health.v1 on one address, with every connection's
/// life bounded: a cap on how many are open, a handshake deadline, an idle timeout and a
/// maximum age (GOAWAY, which Envoy follows by reconnecting).
/// @par Thread Safety
/// start and stop on the main thread; the services run on gRPC's threads and the lanes;
/// connections are accepted on `accept_executor` (the main thread's).
class GrpcServer {
public:
    /// Binds HOST:PORT (port 0: a free one) and starts serving, or fails naming the address
    /// or what is wrong with the TLS settings and files (tls_refusal).
    static result<std::unique_ptr<GrpcServer>> start(boost::asio::any_io_executor accept_executor,
                                                     const std::string& host, unsigned short port,
                                                     std::vector<ServiceLane> lanes, GrpcMetrics& metrics,
                                                     GrpcServerOptions options = {});
    ~GrpcServer();
    GrpcServer(const GrpcServer&) = delete;
    GrpcServer& operator=(const GrpcServer&) = delete;

    /// "HOST:PORT" as bound (the chosen port when it was 0).
    [[nodiscard]] const std::string& address() const noexcept { return address_; }

    /// Stops accepting calls, lets those in flight finish (they end within the store deadline)
    /// for up to `grace`, then cancels the rest. Idempotent. The lanes must still run.
    void stop(std::chrono::milliseconds grace);

private:
    GrpcServer() = default;

    std::unique_ptr<LaneRing> lanes_;
    std::unique_ptr<RateLimitService> rls_;
    std::unique_ptr<HealthService> health_;
    std::unique_ptr<QuotaService> quota_;
    std::unique_ptr<CertificateReloader> reloader_;  // null in plaintext; outlives the provider reading its copies
    std::shared_ptr<grpc::experimental::CertificateProviderInterface> certificates_;  // null in plaintext
    std::unique_ptr<grpc::Server> server_;  // after the services: destroyed before them
    std::unique_ptr<GrpcListener> listener_;
    std::string address_;
    bool stopped_ = false;
};

}  // namespace ratelimitd::rls
