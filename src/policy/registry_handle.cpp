// RegistryHandle: the slow path of a thread's snapshot, and the copies' owner per thread.
#include "ratelimitd/policy/registry_handle.hpp"

namespace ratelimitd::policy {

namespace {

/// Owns the copy detail::thread_snapshot points to; forgets the pointer when the thread ends,
/// so a later call on the way out renews instead of reading a destroyed copy.
struct SnapshotOwner {
    std::shared_ptr<const Registry> registry;  ///< counted in this thread's own control block
    SnapshotOwner() = default;
    SnapshotOwner(const SnapshotOwner&) = delete;
    SnapshotOwner& operator=(const SnapshotOwner&) = delete;
    ~SnapshotOwner() { detail::thread_snapshot = {}; }
};

thread_local SnapshotOwner snapshot_owner;

std::atomic<std::uint64_t> next_handle_id{1};

}  // namespace

RegistryHandle::RegistryHandle(std::shared_ptr<const Registry> initial, EnvoyKeys envoy_keys)
    : id_(next_handle_id.fetch_add(1, std::memory_order_relaxed)),
      current_(std::move(initial)),
      envoy_keys_(std::move(envoy_keys)) {}

std::shared_ptr<const Registry> RegistryHandle::renew() const {
    std::shared_ptr<const Registry> shared;
    std::uint64_t generation = 0;
    {
        std::lock_guard lock(mu_);
        shared = current_;
        generation = generation_.load(std::memory_order_relaxed);
    }
    // The thread's copies share one count of their own, which holds one share of the
    // registry: the shared count moves once per thread and reload, not per check.
    auto holder = std::make_shared<const std::shared_ptr<const Registry>>(std::move(shared));
    SnapshotOwner& owner = snapshot_owner;
    owner.registry = std::shared_ptr<const Registry>(holder, holder->get());
    detail::thread_snapshot = {id_, generation, &owner.registry};
    return owner.registry;
}

void RegistryHandle::replace(std::shared_ptr<const Registry> next) {
    std::lock_guard lock(mu_);
    current_ = std::move(next);
    // After the swap: a thread that sees the new generation renews under the lock, so it
    // can never pair the new generation with the old registry.
    generation_.fetch_add(1, std::memory_order_release);
}

}  // namespace ratelimitd::policy
