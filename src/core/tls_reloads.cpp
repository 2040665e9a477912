// TlsReloads: two atomic counters rendered as one Prometheus family.
#include "ratelimitd/core/tls_reloads.hpp"

namespace ratelimitd {

TlsReloads& TlsReloads::process() noexcept {
    static TlsReloads counter;
    return counter;
}

std::string TlsReloads::render() const {
    return "# HELP ratelimitd_tls_reload_total Changes to a certificate, key or CA file read at run time, served "
           "(applied) or refused (the last good one stays in force).\n"
           "# TYPE ratelimitd_tls_reload_total counter\n"
           "ratelimitd_tls_reload_total{outcome=\"applied\"} " +
           std::to_string(counts_[0].load(std::memory_order_relaxed)) +
           "\n"
           "ratelimitd_tls_reload_total{outcome=\"refused\"} " +
           std::to_string(counts_[1].load(std::memory_order_relaxed)) + "\n";
}

}  // namespace ratelimitd
