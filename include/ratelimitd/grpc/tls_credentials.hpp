// The gRPC listener's server credentials: plaintext, or TLS from files gRPC re-reads.
#pragma once

#include "ratelimitd/grpc/tls_options.hpp"

#include <memory>

namespace grpc {
class ServerCredentials;
namespace experimental {
class CertificateProviderInterface;
}
}  // namespace grpc

namespace ratelimitd::rls {

/// The credentials the listener hands its connections to, and the provider that feeds them
/// certificates (kept for as long as the server runs; null in plaintext).
struct ListenerCredentials {
    std::shared_ptr<grpc::ServerCredentials> credentials;
    std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider;
};

/// Plaintext when TLS is off. Else gRPC's TLS credentials over a file watcher that reads the
/// certificate, key and client CA files again every `reload_interval` (a renewed certificate
/// is served without a restart; a file that cannot be read keeps the last good one), with a
/// client certificate required and verified against the client CA when one is set, and its
/// SAN checked when grpc_tls_client_san is set. `options` must have passed tls_refusal.
ListenerCredentials make_listener_credentials(const GrpcTlsOptions& options);

}  // namespace ratelimitd::rls
