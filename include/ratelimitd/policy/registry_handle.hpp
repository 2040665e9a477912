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
    /// `envoy_keys`: the process settings every registry's Envoy rules are keyed by (not
    /// reloadable, so they stay with the handle rather than with a registry).
    explicit RegistryHandle(std::shared_ptr<const Registry> initial, EnvoyKeys envoy_keys = {})
        : current_(std::move(initial)), envoy_keys_(std::move(envoy_keys)) {}

    /// Whose keys and accounting Envoy's descriptors use (envoy_key_layout and its settings).
    [[nodiscard]] const EnvoyKeys& envoy_keys() const noexcept { return envoy_keys_; }

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
    const EnvoyKeys envoy_keys_;
};

}  // namespace ratelimitd::policy
