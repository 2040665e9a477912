// The current registry snapshot: one per thread, renewed when a reload bumps the generation.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

namespace ratelimitd::policy {

namespace detail {

/// One thread's copy of one handle's registry (a thread keeps one: the server has one handle;
/// a thread that alternates between handles, in tests, renews each time). Trivially
/// destructible, so the hot path reads it straight from thread-local storage; the copy it
/// points to is owned by registry_handle.cpp, which clears this when the thread ends.
struct ThreadSnapshot {
    std::uint64_t handle = 0;      ///< the handle's id; 0: none (ids start at 1)
    std::uint64_t generation = 0;  ///< the handle's generation when the copy was taken
    const std::shared_ptr<const Registry>* registry = nullptr;
};

inline constinit thread_local ThreadSnapshot thread_snapshot{};

}  // namespace detail

/// Holds the registry in force. A check takes one snapshot with current() and uses it to the
/// end, so a reload never changes a check in flight.
///
/// Each thread keeps its own copy of the snapshot, with a reference count of its own (a
/// shared_ptr aliasing the shared one), and the generation it was taken at. current() compares
/// that generation with the handle's (one atomic load) and hands out the thread's copy: no
/// lock, and the only count it moves is the thread's, whose cache line no other thread writes.
/// replace() bumps the generation, so every thread's next current() takes the new registry
/// (under the lock, once per thread and reload). A snapshot handed out stays alive as long as
/// anyone holds it; the superseded registry is freed once every thread has renewed its copy
/// and no check holds it any more (an idle thread keeps its copy until its next check).
/// @par Thread Safety
/// All members may be called from any thread.
class RegistryHandle {
public:
    /// `envoy_keys`: the process settings every registry's Envoy rules are keyed by (not
    /// reloadable, so they stay with the handle rather than with a registry).
    explicit RegistryHandle(std::shared_ptr<const Registry> initial, EnvoyKeys envoy_keys = {});

    /// Whose keys and accounting Envoy's descriptors use (envoy_key_layout and its settings).
    [[nodiscard]] const EnvoyKeys& envoy_keys() const noexcept { return envoy_keys_; }

    /// The registry in force, as this thread's copy.
    [[nodiscard]] std::shared_ptr<const Registry> current() const {
        const detail::ThreadSnapshot& s = detail::thread_snapshot;
        if (s.handle == id_ && s.generation == generation_.load(std::memory_order_acquire)) return *s.registry;
        return renew();
    }

    /// Swaps in a registry that has passed full validation.
    void replace(std::shared_ptr<const Registry> next);

private:
    /// The slow path of current(): takes the registry in force under the lock and makes it
    /// this thread's copy.
    [[nodiscard]] std::shared_ptr<const Registry> renew() const;

    const std::uint64_t id_;  // tells the handles apart in a thread's copy (never reused)
    mutable std::mutex mu_;   // held for a pointer copy only
    std::shared_ptr<const Registry> current_;
    std::atomic<std::uint64_t> generation_{1};  // bumped under mu_ by every replace()
    const EnvoyKeys envoy_keys_;
};

}  // namespace ratelimitd::policy
