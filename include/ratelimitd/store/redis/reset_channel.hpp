// Admin resets reach every sidecar sharing a store: a Redis pub/sub channel under the key
// prefix, published on by the sidecar that resets, listened to by all of them.
#pragma once

#include "ratelimitd/store/redis/endpoint.hpp"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace ratelimitd::store::redis {

/// "<prefix>:resets": the channel that carries the keys reset under `prefix`.
std::string reset_channel(std::string_view prefix);

/// The reset channel of `key` (`<prefix>:<policy>:<tenant>:<scope>`; a prefix has no ':').
std::string reset_channel_of_key(std::string_view key);

/// Listens on the reset channel on a thread of its own (a blocking hiredis connection that
/// only SUBSCRIBEs) and hands each reset key to `on_reset`.
///
/// Messages sent while it is not subscribed are lost, so each time a subscription starts
/// (the first, and after every reconnect) `on_subscribed` runs first: the denial cache
/// clears itself. Every 100 ms it checks where it should be: when `target()` names another
/// endpoint (a Sentinel failover, a new cluster seed) or `channel()` changed (a reload with a
/// new prefix), it subscribes again there.
/// @par Thread Safety
/// The callbacks run on the subscriber's thread; target() and channel() must be thread-safe.
class ResetSubscriber {
public:
    struct Hooks {
        std::function<std::optional<Endpoint>()> target;  ///< where to subscribe now
        std::function<std::string()> channel;             ///< what to subscribe to now
        std::function<void(const std::string& key)> on_reset;
        std::function<void()> on_subscribed;
        /// A failed attempt: the next target() should name another node (cluster seeds).
        std::function<void()> on_failure = [] {};
    };

    explicit ResetSubscriber(Hooks hooks) : hooks_(std::move(hooks)) {}
    ~ResetSubscriber() { stop(); }
    ResetSubscriber(const ResetSubscriber&) = delete;
    ResetSubscriber& operator=(const ResetSubscriber&) = delete;

    void start();
    /// Ends the subscription and joins the thread; idempotent.
    void stop();

private:
    void run();
    /// One subscription, from connecting until it fails or must move; true while it lived.
    bool subscribe_once(const Endpoint& ep, const std::string& channel);
    /// Waits `d` or until stop(); true when stopping.
    bool wait_or_stop(std::chrono::milliseconds d);

    Hooks hooks_;
    std::atomic<bool> stopping_{false};
    std::mutex mu_;
    std::condition_variable wake_;
    std::thread thread_;
};

}  // namespace ratelimitd::store::redis
