// TLS on the gRPC listener: the settings as the server takes them, and what refuses them at
// start (before a connection could fail in the middle of a handshake for a reason known now).
#pragma once

#include "ratelimitd/core/pem_check.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace ratelimitd::rls {

/// grpc_tls and its files, one field per setting (and per variable of envoyproxy/ratelimit:
/// GRPC_SERVER_USE_TLS, GRPC_SERVER_TLS_CERT, GRPC_SERVER_TLS_KEY, GRPC_CLIENT_TLS_CACERT,
/// GRPC_CLIENT_TLS_SAN).
struct GrpcTlsOptions {
    bool enabled = false;        ///< grpc_tls: TLS only; plaintext connections fail their handshake
    std::string cert_file{};     ///< grpc_tls_cert: the server's certificate chain (PEM)
    std::string key_file{};      ///< grpc_tls_key: its private key (PEM)
    std::string client_ca_file{};///< grpc_tls_client_ca: set, a client certificate it signed is required
    std::string client_san{};    ///< grpc_tls_client_san: set, the client certificate must carry it
    std::chrono::seconds reload_interval{10};  ///< the files are read again this often

    /// True when any of the settings is given (on, or a file or name set).
    [[nodiscard]] bool any_set() const noexcept {
        return enabled || !cert_file.empty() || !key_file.empty() || !client_ca_file.empty() || !client_san.empty();
    }
};

/// grpc_tls_cert, grpc_tls_key and grpc_tls_client_ca as read now, for pem_pair_refusal and
/// pem_bundle_refusal (at start and by the CertificateReloader alike).
PemFile read_cert_file(const GrpcTlsOptions& options);
PemFile read_key_file(const GrpcTlsOptions& options);
PemFile read_client_ca_file(const GrpcTlsOptions& options);

/// Why these options cannot serve, naming the setting and the file (never a file's content):
/// a certificate without its key or the other way round, a client CA or SAN without TLS, a
/// SAN without a client CA (no certificate would be asked for, so none could be checked),
/// an unreadable or empty file (or one over 1 MiB), a file without a PEM certificate or key or
/// with one cut short, a key that does not match the certificate. Nothing when TLS is off and nothing is set, or when they can serve.
std::optional<std::string> tls_refusal(const GrpcTlsOptions& options);

}  // namespace ratelimitd::rls
