// A place a rule keeps what its metrics count into, found on the rule's first call and kept
// for the life of the registry snapshot that holds the rule, so the hot path looks no name
// up (stats::ErlStats fills it).
#pragma once

#include <atomic>

namespace ratelimitd::policy {

/// An opaque pointer set once, read lock-free; copying a rule copies what it had found.
/// @par Thread Safety
/// load and store from any thread.
class StatSlot {
public:
    StatSlot() = default;
    StatSlot(const StatSlot& other) noexcept : slot_(other.load()) {}
    StatSlot& operator=(const StatSlot& other) noexcept {
        store(other.load());
        return *this;
    }

    [[nodiscard]] const void* load() const noexcept { return slot_.load(std::memory_order_acquire); }
    void store(const void* slot) const noexcept { slot_.store(slot, std::memory_order_release); }

private:
    // mutable: the registry is shared as const; filling the slot changes no rule's meaning.
    mutable std::atomic<const void*> slot_{nullptr};
};

}  // namespace ratelimitd::policy
