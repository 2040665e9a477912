// The current registry snapshot, swapped atomically on reload.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <memory>
#include <mutex>

namespace ratelimitd::policy {

/// Holds the registry in force. A check takes one snapshot with current() and uses it to the
/// end, so a reload never changes a check in flight.
/// @par Thread Safety
/// All members may be called from any thread.
class RegistryHandle {
public:
    explicit RegistryHandle(std::shared_ptr<const Registry> initial)
        : current_(std::move(initial)) {}

    [[nodiscard]] std::shared_ptr<const Registry> current() const {
        std::lock_guard lock(mu_);
        return current_;
    }

    /// Swaps in a registry that has passed full validation.
    void replace(std::shared_ptr<const Registry> next) {
        std::lock_guard lock(mu_);
        current_ = std::move(next);
    }

private:
    mutable std::mutex mu_;  // held for a pointer copy only
    std::shared_ptr<const Registry> current_;
};

}  // namespace ratelimitd::policy
