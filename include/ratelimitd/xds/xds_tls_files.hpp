// The xDS client's TLS files (control plane CA, client certificate and key), read again on each
// connection attempt so a renewed certificate needs no restart, and checked before gRPC gets
// them: gRPC would take an empty key as "no client certificate" and a cut-short CA as no trust,
// and every attempt would fail until the file is fixed.
#pragma once

#include <grpcpp/security/credentials.h>

#include "ratelimitd/core/pem_check.hpp"

#include <optional>
#include <string>

namespace ratelimitd::xds {

/// The files by path; an empty path is not used (the CA: gRPC's default roots; the pair: no
/// client certificate).
struct XdsTlsPaths {
    std::string ca;
    std::string cert;
    std::string key;
};

/// The last good content of the files. current() reads them again; a change that passes the
/// checks (core/pem_check) is used from then on and counted applied, one that does not is
/// logged once (naming the file and the reason, never the content), counted refused, and the
/// last good content is used instead (ratelimitd_tls_reload_total).
/// @par Thread Safety
/// One thread (the client's).
class XdsTlsFiles {
public:
    /// Why the files cannot be used at start, naming the setting (xds_tls_ca, xds_tls_cert,
    /// xds_tls_key) and the file; nothing when they can.
    static std::optional<std::string> refusal(const XdsTlsPaths& paths);

    /// Reads the files now (they passed refusal() at start).
    explicit XdsTlsFiles(XdsTlsPaths paths);

    /// The credentials' PEM: the files as read now when good, else the last good ones.
    grpc::SslCredentialsOptions current();

private:
    struct Seen {
        PemFile ca, cert, key;
    };
    Seen read() const;
    static std::optional<std::string> seen_refusal(const Seen& seen);

    XdsTlsPaths paths_;
    Seen seen_;
    grpc::SslCredentialsOptions good_;
};

}  // namespace ratelimitd::xds
