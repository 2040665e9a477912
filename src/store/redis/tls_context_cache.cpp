// TlsContextCache: read the files, compare with the last read, make a context on a change.
#include "tls_context_cache.hpp"

#include "tls_context.hpp"

#include "ratelimitd/core/pem_check.hpp"
#include "ratelimitd/core/tls_reloads.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::store::redis {

namespace ssl = boost::asio::ssl;

namespace {

// A file's bytes, or why it cannot be read, in one string that changes when either does.
std::string snapshot(const char* setting, const std::string& path) {
    if (path.empty()) return "-";
    const auto read = read_pem_file(setting, path);
    return read.bytes ? "+" + *read.bytes : "!" + read.refusal;
}

}  // namespace

TlsContextCache& TlsContextCache::process() {
    static TlsContextCache cache;
    return cache;
}

std::string TlsContextCache::key(const TlsOptions& o) {
    // The paths and the flag say which context it is; the server name is set per connection.
    return o.ca_file + '\n' + o.cert_file + '\n' + o.key_file + '\n' + (o.insecure_skip_verify ? "1" : "0");
}

std::string TlsContextCache::read_files(const TlsOptions& o) {
    const auto ca = snapshot("redis_tls_ca", o.ca_file);
    const auto cert = snapshot("redis_tls_cert", o.cert_file);
    const auto key = snapshot("redis_tls_key", o.key_file);
    return std::to_string(ca.size()) + ':' + ca + std::to_string(cert.size()) + ':' + cert + key;
}

result<std::shared_ptr<ssl::context>> TlsContextCache::get(const TlsOptions& options) {
    std::lock_guard lock(mu_);
    auto [it, first] = entries_.try_emplace(key(options));
    auto files = read_files(options);
    Entry& entry = it->second;
    if (!first && files == entry.files) {
        if (entry.good) return entry.good;
        return entry.refusal;
    }
    entry.files = std::move(files);
    return remake(entry, options);
}

result<std::shared_ptr<ssl::context>> TlsContextCache::remake(Entry& entry, const TlsOptions& options) {
    auto made = make_tls_context(options);
    if (made) {
        if (entry.good) {
            TlsReloads::process().count(TlsReload::applied);
            spdlog::info("redis: TLS reload applied: the changed files passed the checks and are used from the "
                         "next connection on");
        }
        entry.good = std::shared_ptr<ssl::context>(std::move(*made));
        return entry.good;
    }
    entry.refusal = made.error();
    if (!entry.good) return entry.refusal;  // never good: fails as at start, a store failure
    TlsReloads::process().count(TlsReload::refused);
    spdlog::warn("redis: TLS reload refused: {}; still using the last good files", made.error().detail);
    return entry.good;
}

}  // namespace ratelimitd::store::redis
