// Drops the embedded store's expired keys from a timer, so memory follows the live tenants.
#pragma once

#include "ratelimitd/store/memory/memory_store.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>

namespace ratelimitd::store::memory {

/// How often the app sweeps the embedded store: the one place expired keys are dropped (a
/// check only trims a shard over its share of memory_max_keys), so an idle key outlives its
/// TTL by at most this long, and a check spends nothing on visiting other keys.
inline constexpr std::chrono::milliseconds memory_sweep_interval{5'000};

/// Calls MemoryStore::sweep_expired() every `interval` on `executor`, from start() until
/// stop() or destruction.
/// @par Thread Safety
/// start(), stop() and the destructor must run on the executor's thread, or while nothing
/// runs it. The sweep itself locks one shard at a time, so server threads keep deciding.
class MemorySweeper {
public:
    /// `store` must outlive the sweeper's last sweep, i.e. until stop() or destruction.
    MemorySweeper(boost::asio::any_io_executor executor, MemoryStore& store,
                  std::chrono::milliseconds interval = memory_sweep_interval);
    ~MemorySweeper();
    MemorySweeper(const MemorySweeper&) = delete;
    MemorySweeper& operator=(const MemorySweeper&) = delete;

    /// Arms the first sweep one interval from now. Call once.
    void start();
    /// No sweep runs after this returns; the pending wait completes as cancelled, so an
    /// io_context with nothing else to do returns from run().
    void stop();

private:
    struct State;
    // Shared with the timer loop, which may still be queued on the executor after the
    // sweeper is gone; it then finds `stopped` and touches nothing else.
    std::shared_ptr<State> state_;
};

}  // namespace ratelimitd::store::memory
