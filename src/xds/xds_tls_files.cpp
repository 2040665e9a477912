// XdsTlsFiles: read, compare with the last look, check, then adopt or refuse.
#include "ratelimitd/xds/xds_tls_files.hpp"

#include "ratelimitd/core/tls_reloads.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::xds {

namespace {

PemFile read_setting(const char* setting, const std::string& path) {
    if (path.empty()) return {setting, path, {std::string(), {}}};
    return {setting, path, read_pem_file(setting, path)};
}

bool same(const PemFile& a, const PemFile& b) { return a.read == b.read; }

}  // namespace

std::optional<std::string> XdsTlsFiles::seen_refusal(const Seen& s) {
    if (!s.ca.path.empty()) {
        if (auto refusal = pem_bundle_refusal(s.ca)) return refusal;
    }
    if (s.cert.path.empty() && s.key.path.empty()) return std::nullopt;
    return pem_pair_refusal(s.cert, s.key);
}

std::optional<std::string> XdsTlsFiles::refusal(const XdsTlsPaths& paths) {
    XdsTlsFiles files(paths);
    return seen_refusal(files.seen_);
}

XdsTlsFiles::XdsTlsFiles(XdsTlsPaths paths) : paths_(std::move(paths)), seen_(read()) {
    good_.pem_root_certs = seen_.ca.read.bytes.value_or("");
    good_.pem_cert_chain = seen_.cert.read.bytes.value_or("");
    good_.pem_private_key = seen_.key.read.bytes.value_or("");
}

XdsTlsFiles::Seen XdsTlsFiles::read() const {
    return {read_setting("xds_tls_ca", paths_.ca), read_setting("xds_tls_cert", paths_.cert),
            read_setting("xds_tls_key", paths_.key)};
}

grpc::SslCredentialsOptions XdsTlsFiles::current() {
    auto now = read();
    if (same(now.ca, seen_.ca) && same(now.cert, seen_.cert) && same(now.key, seen_.key)) return good_;
    seen_ = std::move(now);
    if (auto why = seen_refusal(seen_)) {
        TlsReloads::process().count(TlsReload::refused);
        spdlog::warn("xds: TLS reload refused: {}; still using the last good files for the control plane", *why);
        return good_;
    }
    good_.pem_root_certs = *seen_.ca.read.bytes;
    good_.pem_cert_chain = *seen_.cert.read.bytes;
    good_.pem_private_key = *seen_.key.read.bytes;
    TlsReloads::process().count(TlsReload::applied);
    spdlog::info("xds: TLS reload applied: the changed files passed the checks and are used from this connection on");
    return good_;
}

}  // namespace ratelimitd::xds
