// The denial cache the server threads' Redis stores share, kept true by reconnects and resets.
#pragma once

#include "ratelimitd/store/denial_cache.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/reset_channel.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

/// One denial cache for the process, so a key denied on one thread is denied on all, in front
/// of every thread's store. What could make it wrong clears it: a store that connects again
/// after a loss (on_reconnected), and a reset on any sidecar sharing the store, heard on the
/// reset channel (docs/operations.md "Admin endpoints"). Disabled (--denial-cache off): stores are used bare.
/// @par Thread Safety
/// front() and the constructor, start(), stop() on the main thread; the cache itself and the
/// hook from reconnected_hook() from any thread.
class SharedDenialCache {
public:
    /// `key_prefix` names the registry's prefix now (the channel follows reloads).
    SharedDenialCache(bool enabled, std::function<std::string()> key_prefix);
    ~SharedDenialCache();
    SharedDenialCache(const SharedDenialCache&) = delete;
    SharedDenialCache& operator=(const SharedDenialCache&) = delete;

    [[nodiscard]] bool enabled() const noexcept { return enabled_; }

    /// `store` as a server thread uses it: behind the cache when enabled. Valid as long as
    /// this object and `store` are.
    Store& front(Store& store);

    /// For a store's on_reconnected: clears the cache (a Redis that came back may have lost
    /// or changed counters).
    std::function<void()> reconnected_hook();

    /// Subscribes to the reset channel wherever `target()` names (thread-safe; called on the
    /// subscriber's thread); `on_failure` after an attempt failed. Nothing when disabled.
    void start(std::function<std::optional<Endpoint>()> target, std::function<void()> on_failure = [] {});
    /// Ends the subscription; idempotent.
    void stop();

private:
    bool enabled_;
    std::function<std::string()> key_prefix_;
    DenialCache cache_;
    std::vector<std::unique_ptr<CachingStore>> fronts_;
    std::optional<ResetSubscriber> subscriber_;
};

}  // namespace ratelimitd::store::redis
