// The bounded queue of quota webhook events waiting for their target to take them. No I/O.
#pragma once

#include "ratelimitd/policy/notify_rule.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
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

/// Holds at most `capacity` events, oldest first, in one line per target: take() looks at the
/// head of each target's line only, so its cost grows with the targets (a few, from the config),
/// never with the events waiting. Not thread-safe (the Notifier locks it).
class DeliveryQueue {
public:
    explicit DeliveryQueue(std::size_t capacity) : capacity_(capacity) {}

    /// Adds `e` at the back; false (and `e` dropped) when `capacity` events wait already.
    bool push(PendingEvent e);

    /// The oldest event whose target `has_room` (by target name), taken out; nothing when no
    /// waiting event's target has room.
    std::optional<PendingEvent> take(const std::function<bool(const std::string&)>& has_room);

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool full() const noexcept { return size_ >= capacity_; }

private:
    struct Waiting {
        std::uint64_t order;  ///< when it was pushed, across every target's line
        PendingEvent event;
    };

    std::size_t capacity_;
    std::size_t size_ = 0;
    std::uint64_t pushed_ = 0;
    std::map<std::string, std::deque<Waiting>, std::less<>> lines_;  ///< by target name
};

}  // namespace ratelimitd::notify
