// tls_refusal: the settings' pairing first, then each file read and parsed with OpenSSL, and
// the key checked against the certificate, as gRPC's file watcher would later load them.
#include "ratelimitd/grpc/tls_options.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

namespace ratelimitd::rls {

namespace {

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using Cert = std::unique_ptr<X509, decltype(&X509_free)>;
using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

// Far above any certificate bundle; a path naming a device (/dev/zero) is not read forever.
constexpr std::size_t max_file_bytes = 1024 * 1024;

// An encrypted key is refused, not prompted for on the terminal: there is no passphrase setting.
int no_passphrase(char*, int, int, void*) { return -1; }

// The file's bytes, or the reason it cannot be read ("No such file or directory").
std::optional<std::string> read_file(const std::string& path, std::string& reason) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        reason = std::strerror(errno);
        return std::nullopt;
    }
    std::string bytes(max_file_bytes + 1, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (in.bad()) {
        reason = std::strerror(errno);
        return std::nullopt;
    }
    bytes.resize(static_cast<std::size_t>(in.gcount()));
    if (bytes.size() > max_file_bytes) {
        reason = "larger than 1 MiB";
        return std::nullopt;
    }
    return bytes;
}

Bio memory_bio(const std::string& bytes) {
    return Bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())), &BIO_free);
}

Cert first_certificate(const std::string& pem) {
    auto bio = memory_bio(pem);
    Cert cert(PEM_read_bio_X509(bio.get(), nullptr, &no_passphrase, nullptr), &X509_free);
    ERR_clear_error();
    return cert;
}

Key private_key(const std::string& pem) {
    auto bio = memory_bio(pem);
    Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, &no_passphrase, nullptr), &EVP_PKEY_free);
    ERR_clear_error();
    return key;
}

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

// The file's bytes, or the refusal naming the setting, the path and why.
std::optional<std::string> read_setting_file(const char* key, const std::string& path, std::string& refusal) {
    std::string reason;
    auto bytes = read_file(path, reason);
    if (!bytes) refusal = std::string(key) + ": cannot read " + path + ": " + reason;
    return bytes;
}

std::optional<std::string> files_refusal(const GrpcTlsOptions& o) {
    std::string refusal;
    const auto cert_pem = read_setting_file("grpc_tls_cert", o.cert_file, refusal);
    if (!cert_pem) return refusal;
    const auto key_pem = read_setting_file("grpc_tls_key", o.key_file, refusal);
    if (!key_pem) return refusal;
    const auto cert = first_certificate(*cert_pem);
    if (!cert) return "grpc_tls_cert: " + o.cert_file + " holds no PEM certificate";
    const auto key = private_key(*key_pem);
    if (!key) return "grpc_tls_key: " + o.key_file + " holds no unencrypted PEM private key";
    if (X509_check_private_key(cert.get(), key.get()) != 1) {
        ERR_clear_error();
        return "grpc_tls_key: " + o.key_file + " does not match the certificate in grpc_tls_cert " + o.cert_file;
    }
    if (o.client_ca_file.empty()) return std::nullopt;
    const auto ca_pem = read_setting_file("grpc_tls_client_ca", o.client_ca_file, refusal);
    if (!ca_pem) return refusal;
    if (!first_certificate(*ca_pem)) return "grpc_tls_client_ca: " + o.client_ca_file + " holds no PEM certificate";
    return std::nullopt;
}

}  // namespace

std::optional<std::string> tls_refusal(const GrpcTlsOptions& options) {
    if (auto refusal = pairing_refusal(options)) return refusal;
    if (!options.enabled) return std::nullopt;
    return files_refusal(options);
}

}  // namespace ratelimitd::rls
