// The gRPC listener's server credentials: plaintext, or TLS from the reloader's checked copies.
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

class CertificateReloader;

/// The credentials the listener hands its connections to, and the provider that feeds them
/// certificates (kept for as long as the server runs; null in plaintext).
struct ListenerCredentials {
    std::shared_ptr<grpc::ServerCredentials> credentials;
    std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider;
};

/// Plaintext when TLS is off. Else gRPC's TLS credentials over a file watcher that reads the
/// `reloader`'s copies every second: only a certificate, key and client CA that passed its
/// checks reach gRPC (a renewed certificate is served without a restart; a bad file keeps the
/// last good pair), with a client certificate required and verified against the client CA when
/// one is set, and its SAN checked when grpc_tls_client_san is set. `reloader` must outlive
/// the provider returned.
ListenerCredentials make_listener_credentials(const GrpcTlsOptions& options, const CertificateReloader* reloader);

}  // namespace ratelimitd::rls
