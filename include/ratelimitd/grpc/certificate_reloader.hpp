// The gRPC listener's certificates at run time: the files read again every reload interval,
// checked with OpenSSL, and only a good pair (and a good client CA) handed on to gRPC.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/core/pem_check.hpp"
#include "ratelimitd/grpc/served_pem.hpp"
#include "ratelimitd/grpc/tls_options.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace ratelimitd::rls {

/// Reads grpc_tls_cert, grpc_tls_key and grpc_tls_client_ca every `reload_interval`; on a
/// change, checks them (core/pem_check) and serves them when good. A file that is empty, cut short,
/// missing, or a key that does not match its certificate is refused: logged (naming the file
/// and the reason, never its content), counted (ratelimitd_tls_reload_total{outcome="refused"})
/// and the last good pair stays served. gRPC watches the served copies (ServedPem), never the
/// operator's files, so what it reads has always passed the check.
/// @par Thread Safety
/// start and the destructor on one thread; the checks run on a thread of their own.
class CertificateReloader {
public:
    /// Checks the files now (refused as tls_refusal refuses them), serves them, and starts
    /// the thread that reads them again.
    static result<std::unique_ptr<CertificateReloader>> start(const GrpcTlsOptions& options);
    /// Stops the thread; the served copies close with it, so gRPC's watcher must be gone first.
    ~CertificateReloader();
    CertificateReloader(const CertificateReloader&) = delete;
    CertificateReloader& operator=(const CertificateReloader&) = delete;

    /// The key and its chain in one file: gRPC reads the two from one path, so it never pairs
    /// one version's key with another's certificate.
    [[nodiscard]] const std::string& identity_path() const noexcept { return identity_->path(); }
    /// The client CA bundle; "" without grpc_tls_client_ca.
    [[nodiscard]] const std::string& client_ca_path() const noexcept;

private:
    explicit CertificateReloader(const GrpcTlsOptions& options);

    void run();
    void check_identity();
    void check_client_ca();
    void refuse(const std::string& what, const std::string& refusal);
    bool apply(ServedPem& served, const std::string& pem, const std::string& what);

    GrpcTlsOptions options_;
    std::unique_ptr<ServedPem> identity_;
    std::unique_ptr<ServedPem> client_ca_;  // null without a client CA
    // What the files held at the last look (or why they could not be read): only a change is
    // checked, logged and counted, so a file that stays bad is one refusal, not one a tick.
    PemFile seen_cert_, seen_key_, seen_ca_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace ratelimitd::rls
