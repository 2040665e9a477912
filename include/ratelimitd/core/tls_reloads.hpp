// ratelimitd_tls_reload_total: what became of each change to a certificate, key or CA file
// read at run time (the gRPC listener's, the xDS client's), one series for the process.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ratelimitd {

/// A changed file served from then on (applied), or refused (the last good one kept).
enum class TlsReload : std::size_t { applied, refused };

/// The process's counter: every reader of TLS files counts here, so /metrics has one family
/// whichever of them run (the log line says which file it was).
/// @par Thread Safety
/// Every member may be called from any thread.
class TlsReloads {
public:
    /// The one counter of the process.
    static TlsReloads& process() noexcept;

    void count(TlsReload outcome) noexcept {
        counts_[static_cast<std::size_t>(outcome)].fetch_add(1, std::memory_order_relaxed);
    }

    /// Prometheus text of the family (both outcomes, zeros included).
    [[nodiscard]] std::string render() const;

private:
    std::array<std::atomic<std::uint64_t>, 2> counts_{};
};

}  // namespace ratelimitd
