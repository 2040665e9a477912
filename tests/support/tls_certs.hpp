// Certificates for TLS tests, made per test run with the openssl command into a scratch
// directory: a CA, server certificates (good, expired, for another name), a client
// certificate, and a second CA that signed none of them.
#pragma once

#include <string>
#include <vector>

namespace ratelimitd::test {

/// A certificate and its key, as PEM files.
struct CertFiles {
    std::string cert;
    std::string key;
};

class TlsCerts {
public:
    /// Generates everything under scratch_dir()/tls-N (one openssl run per file; ~0.2 s).
    TlsCerts();

    const std::string& ca() const { return ca_.cert; }        ///< the CA that signed the rest
    const std::string& other_ca() const { return other_ca_.cert; }  ///< signed nothing here
    const CertFiles& server() const { return server_; }        ///< localhost, 127.0.0.1
    const CertFiles& expired_server() const { return expired_; }  ///< same names, expired 2020
    const CertFiles& named_server() const { return named_; }   ///< only DNS:redis.test
    const CertFiles& client() const { return client_; }        ///< clientAuth, CN=ratelimitd

    /// redis-server arguments for a TLS port serving `cert` (trusting ca() for client
    /// certificates, required when `require_client_cert`).
    std::vector<std::string> redis_args(unsigned short tls_port, const CertFiles& cert,
                                        bool require_client_cert = false) const;

private:
    CertFiles issue(const std::string& name, const std::string& subject, const std::string& extensions,
                    const std::string& dates) const;
    std::string dir_;
    CertFiles ca_, other_ca_, server_, expired_, named_, client_;
};

}  // namespace ratelimitd::test
