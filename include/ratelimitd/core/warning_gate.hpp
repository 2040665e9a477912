// WarningGate: one warning for a run of the same failure, then one per interval, so a store
// that is down for minutes logs a handful of lines and not one per request or report.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace ratelimitd {

/// Decides which failures of a run are logged: the first, then at most one per `every`, each
/// with the count of those not logged since; and the first success after them.
/// @par Thread Safety
/// Every member may be called from any thread.
class WarningGate {
public:
    using clock = std::chrono::steady_clock;

    explicit WarningGate(clock::duration every) : every_(every) {}

    /// A failure: true when it is to be logged now, with `unlogged` set to the failures of
    /// the run not logged since the last one that was.
    bool failed(std::uint64_t& unlogged);
    /// A success: true when it ends a run of failures (worth one line saying so).
    bool recovered();

private:
    const clock::duration every_;
    std::mutex mutex_;
    bool failing_ = false;
    clock::time_point last_logged_{};
    std::uint64_t unlogged_ = 0;
};

}  // namespace ratelimitd
