// The bounded queue of quota webhook events waiting for their target to take them. No I/O.
#pragma once

#include "ratelimitd/policy/notify_rule.hpp"

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ratelimitd::notify {

/// One event on its way: where, what, and since when (its retries end at a deadline from then).
struct PendingEvent {
    std::shared_ptr<const policy::NotifyTarget> target;
    std::string id;
    std::string body;
    std::chrono::steady_clock::time_point queued_at;
};

/// Holds at most `capacity` events, oldest first. Not thread-safe (the Notifier locks it).
class DeliveryQueue {
public:
    explicit DeliveryQueue(std::size_t capacity) : capacity_(capacity) {}

    /// Adds `e` at the back; false (and `e` dropped) when `capacity` events wait already.
    bool push(PendingEvent e);

    /// The oldest event whose target `has_room` (by target name), taken out; nothing when no
    /// waiting event's target has room.
    std::optional<PendingEvent> take(const std::function<bool(const std::string&)>& has_room);

    [[nodiscard]] std::size_t size() const noexcept { return events_.size(); }

private:
    std::size_t capacity_;
    std::deque<PendingEvent> events_;
};

}  // namespace ratelimitd::notify
