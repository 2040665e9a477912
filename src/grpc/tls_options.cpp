// tls_refusal: the settings' pairing first, then each file read and checked as the reloader
// checks it on every change (pem_check), so a start and a reload refuse the same files.
#include "ratelimitd/grpc/tls_options.hpp"

namespace ratelimitd::rls {

namespace {

// The settings that go together: TLS needs both files; the client checks need TLS, and the
// SAN needs the client CA (ERL would skip such a SAN check without a word).
std::optional<std::string> pairing_refusal(const GrpcTlsOptions& o) {
    if (!o.enabled) {
        for (const auto& [key, value] : {std::pair{"grpc_tls_cert", &o.cert_file}, {"grpc_tls_key", &o.key_file},
                                         {"grpc_tls_client_ca", &o.client_ca_file},
                                         {"grpc_tls_client_san", &o.client_san}}) {
            if (!value->empty()) {
                return std::string(key) + " is set but grpc_tls is off: set grpc_tls on (--grpc-tls on) to serve "
                                          "TLS, or unset " + key;
            }
        }
        return std::nullopt;
    }
    if (o.cert_file.empty()) return "grpc_tls is on but grpc_tls_cert is not set: TLS needs the server's certificate";
    if (o.key_file.empty()) {
        return "grpc_tls is on but grpc_tls_key is not set: TLS needs the certificate's private key";
    }
    if (!o.client_san.empty() && o.client_ca_file.empty()) {
        return "grpc_tls_client_san needs grpc_tls_client_ca: without a client CA no client certificate is asked "
               "for, so its name cannot be checked";
    }
    return std::nullopt;
}

std::optional<std::string> files_refusal(const GrpcTlsOptions& o) {
    if (auto refusal = pem_pair_refusal(read_cert_file(o), read_key_file(o))) return refusal;
    if (o.client_ca_file.empty()) return std::nullopt;
    return pem_bundle_refusal(read_client_ca_file(o));
}

}  // namespace

PemFile read_cert_file(const GrpcTlsOptions& o) {
    return {"grpc_tls_cert", o.cert_file, read_pem_file("grpc_tls_cert", o.cert_file)};
}

PemFile read_key_file(const GrpcTlsOptions& o) {
    return {"grpc_tls_key", o.key_file, read_pem_file("grpc_tls_key", o.key_file)};
}

PemFile read_client_ca_file(const GrpcTlsOptions& o) {
    return {"grpc_tls_client_ca", o.client_ca_file, read_pem_file("grpc_tls_client_ca", o.client_ca_file)};
}

std::optional<std::string> tls_refusal(const GrpcTlsOptions& options) {
    if (auto refusal = pairing_refusal(options)) return refusal;
    if (!options.enabled) return std::nullopt;
    return files_refusal(options);
}

}  // namespace ratelimitd::rls
