// DeliveryQueue: a line per target; take() compares the heads of the lines with room.
#include "ratelimitd/notify/delivery_queue.hpp"

namespace ratelimitd::notify {

bool DeliveryQueue::push(PendingEvent e) {
    if (full()) return false;
    const std::string& target = e.target->name;
    auto line = lines_.find(target);
    if (line == lines_.end()) line = lines_.emplace(target, std::deque<Waiting>{}).first;
    line->second.push_back(Waiting{pushed_++, std::move(e)});
    ++size_;
    return true;
}

std::optional<PendingEvent> DeliveryQueue::take(const std::function<bool(const std::string&)>& has_room) {
    std::deque<Waiting>* oldest = nullptr;
    for (auto& [target, line] : lines_) {
        if (line.empty() || !has_room(target)) continue;
        if (oldest == nullptr || line.front().order < oldest->front().order) oldest = &line;
    }
    if (oldest == nullptr) return std::nullopt;
    PendingEvent e = std::move(oldest->front().event);
    oldest->pop_front();
    --size_;
    return e;
}

}  // namespace ratelimitd::notify
