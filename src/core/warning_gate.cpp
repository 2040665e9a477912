// WarningGate: the first failure of a run, then one per interval.
#include "ratelimitd/core/warning_gate.hpp"

namespace ratelimitd {

bool WarningGate::failed(std::uint64_t& unlogged) {
    const std::lock_guard lock(mutex_);
    const auto now = clock::now();
    if (failing_ && now - last_logged_ < every_) {
        ++unlogged_;
        return false;
    }
    unlogged = unlogged_;
    unlogged_ = 0;
    failing_ = true;
    last_logged_ = now;
    return true;
}

bool WarningGate::recovered() {
    const std::lock_guard lock(mutex_);
    if (!failing_) return false;
    failing_ = false;
    unlogged_ = 0;
    return true;
}

}  // namespace ratelimitd
