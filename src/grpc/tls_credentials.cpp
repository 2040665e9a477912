// make_listener_credentials: grpc::experimental::TlsServerCredentials with a
// FileWatcherCertificateProvider, chosen over SslServerCredentials (which holds the PEM it
// was given for the server's life) so certificates renewed on disk are served without a
// restart, as envoyproxy/ratelimit reloads its own. The watcher reads the reloader's checked
// copies, never the operator's files: gRPC aborts on an empty key and serves a half-written
// certificate or a mismatched key as they are (every handshake fails).
#include "ratelimitd/grpc/tls_credentials.hpp"

#include "ratelimitd/grpc/certificate_reloader.hpp"

#include "ratelimitd/grpc/client_san_verifier.hpp"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

namespace ratelimitd::rls {

namespace gx = grpc::experimental;

namespace {

// The copies live in memory and change only after a check, so reading them every second costs
// nothing and adds at most a second to the reload interval.
constexpr unsigned int served_copy_interval_seconds = 1;

}  // namespace

ListenerCredentials make_listener_credentials(const GrpcTlsOptions& options, const CertificateReloader* reloader) {
    if (!options.enabled || !reloader) return {grpc::InsecureServerCredentials(), nullptr};
    // Key and chain from the one path: gRPC never pairs one version's key with another's chain.
    auto provider = std::make_shared<gx::FileWatcherCertificateProvider>(
        reloader->identity_path(), reloader->identity_path(), reloader->client_ca_path(),
        served_copy_interval_seconds);
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
