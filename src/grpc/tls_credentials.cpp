// make_listener_credentials: grpc::experimental::TlsServerCredentials with a
// FileWatcherCertificateProvider, chosen over SslServerCredentials (which holds the PEM it
// was given for the server's life) so certificates renewed on disk are served without a
// restart, as envoyproxy/ratelimit reloads its own.
#include "ratelimitd/grpc/tls_credentials.hpp"

#include "ratelimitd/grpc/client_san_verifier.hpp"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <algorithm>

namespace ratelimitd::rls {

namespace gx = grpc::experimental;

ListenerCredentials make_listener_credentials(const GrpcTlsOptions& options) {
    if (!options.enabled) return {grpc::InsecureServerCredentials(), nullptr};
    const auto seconds = std::max<std::chrono::seconds::rep>(options.reload_interval.count(), 1);
    const auto interval = static_cast<unsigned int>(std::min<std::chrono::seconds::rep>(seconds, 86'400));
    auto provider = std::make_shared<gx::FileWatcherCertificateProvider>(options.key_file, options.cert_file,
                                                                         options.client_ca_file, interval);
    gx::TlsServerCredentialsOptions tls(provider);
    tls.watch_identity_key_cert_pairs();
    if (options.client_ca_file.empty()) {
        tls.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    } else {
        // No certificate, or one the CA did not sign (or not for client use): the handshake fails.
        tls.watch_root_certs();
        tls.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    }
    // The chain is verified by then; this is the extra check on the peer's identity.
    if (options.client_san.empty()) tls.set_certificate_verifier(std::make_shared<gx::NoOpCertificateVerifier>());
    else tls.set_certificate_verifier(gx::ExternalCertificateVerifier::Create<ClientSanVerifier>(options.client_san));
    return {gx::TlsServerCredentials(tls), std::move(provider)};
}

}  // namespace ratelimitd::rls
