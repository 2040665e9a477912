// DeliveryQueue: a deque with a bound; take() skips the events of busy targets.
#include "ratelimitd/notify/delivery_queue.hpp"

namespace ratelimitd::notify {

bool DeliveryQueue::push(PendingEvent e) {
    if (events_.size() >= capacity_) return false;
    events_.push_back(std::move(e));
    return true;
}

std::optional<PendingEvent> DeliveryQueue::take(const std::function<bool(const std::string&)>& has_room) {
    for (auto it = events_.begin(); it != events_.end(); ++it) {
        if (!has_room(it->target->name)) continue;
        PendingEvent e = std::move(*it);
        events_.erase(it);
        return e;
    }
    return std::nullopt;
}

}  // namespace ratelimitd::notify
