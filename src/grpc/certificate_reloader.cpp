// CertificateReloader: read, compare with the last look, check, then serve or refuse.
#include "ratelimitd/grpc/certificate_reloader.hpp"

#include "ratelimitd/core/tls_reloads.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::rls {

namespace {

// The key first, then the chain: OpenSSL skips the blocks it is not reading, so gRPC finds the
// key and the certificates in the one text.
std::string identity_text(const std::string& key_pem, const std::string& cert_pem) {
    const bool ends_line = !key_pem.empty() && key_pem.back() == '\n';
    return key_pem + (ends_line ? "" : "\n") + cert_pem;
}

}  // namespace

CertificateReloader::CertificateReloader(const GrpcTlsOptions& options) : options_(options) {}

result<std::unique_ptr<CertificateReloader>> CertificateReloader::start(const GrpcTlsOptions& options) {
    std::unique_ptr<CertificateReloader> r(new CertificateReloader(options));
    r->seen_cert_ = read_cert_file(options);
    r->seen_key_ = read_key_file(options);
    if (auto refusal = pem_pair_refusal(r->seen_cert_, r->seen_key_)) return Problem{errc::invalid_request, *refusal};
    auto identity =
        ServedPem::create("grpc-tls-identity", identity_text(*r->seen_key_.read.bytes, *r->seen_cert_.read.bytes));
    if (!identity) return identity.error();
    r->identity_ = std::move(*identity);
    if (!options.client_ca_file.empty()) {
        r->seen_ca_ = read_client_ca_file(options);
        if (auto refusal = pem_bundle_refusal(r->seen_ca_)) return Problem{errc::invalid_request, *refusal};
        auto ca = ServedPem::create("grpc-tls-client-ca", *r->seen_ca_.read.bytes);
        if (!ca) return ca.error();
        r->client_ca_ = std::move(*ca);
    }
    r->thread_ = std::thread([raw = r.get()] { raw->run(); });
    return r;
}

CertificateReloader::~CertificateReloader() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

const std::string& CertificateReloader::client_ca_path() const noexcept {
    static const std::string none;
    return client_ca_ ? client_ca_->path() : none;
}

void CertificateReloader::run() {
    const auto interval = std::max(options_.reload_interval, std::chrono::seconds(1));
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
        lock.unlock();
        check_identity();
        if (client_ca_) check_client_ca();
        lock.lock();
    }
}

void CertificateReloader::check_identity() {
    auto cert = read_cert_file(options_);
    auto key = read_key_file(options_);
    if (cert.read == seen_cert_.read && key.read == seen_key_.read) return;
    seen_cert_ = std::move(cert);
    seen_key_ = std::move(key);
    if (auto refusal = pem_pair_refusal(seen_cert_, seen_key_)) {
        refuse("certificate and key", *refusal);
        return;
    }
    if (!apply(*identity_, identity_text(*seen_key_.read.bytes, *seen_cert_.read.bytes),
               "the certificate in " + options_.cert_file + " and the key in " + options_.key_file)) {
        seen_cert_.read = seen_key_.read = PemRead{};  // never equal to a read: the next tick tries again
    }
}

void CertificateReloader::check_client_ca() {
    auto ca = read_client_ca_file(options_);
    if (ca.read == seen_ca_.read) return;
    seen_ca_ = std::move(ca);
    if (auto refusal = pem_bundle_refusal(seen_ca_)) {
        refuse("client CA", *refusal);
        return;
    }
    if (!apply(*client_ca_, *seen_ca_.read.bytes, "the client CA in " + options_.client_ca_file)) {
        seen_ca_.read = PemRead{};  // never equal to a read: the next tick tries again
    }
}

void CertificateReloader::refuse(const std::string& what, const std::string& refusal) {
    TlsReloads::process().count(TlsReload::refused);
    spdlog::warn("grpc: TLS reload refused: {}; still serving the last good {}", refusal, what);
}

bool CertificateReloader::apply(ServedPem& served, const std::string& pem, const std::string& what) {
    if (!served.replace(pem)) {
        refuse(what, "cannot hold the new files in memory");
        return false;
    }
    TlsReloads::process().count(TlsReload::applied);
    spdlog::info("grpc: TLS reload applied: {} passed the checks and are served from now on", what);
    return true;
}

}  // namespace ratelimitd::rls
