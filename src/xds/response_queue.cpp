// ResponseQueue: one response applying, at most one waiting; the newest wins.
#include "ratelimitd/xds/response_queue.hpp"

#include <utility>

namespace ratelimitd::xds {

std::optional<std::string> ResponseQueue::put(ReceivedResponse received) {
    std::optional<std::string> superseded;
    {
        std::lock_guard lock(mu_);
        if (!applying_) {
            next_ = std::move(received);
            applying_ = true;
        } else {
            if (waiting_) superseded = waiting_->response.version_info();
            waiting_ = std::move(received);
        }
    }
    ready_.notify_one();
    return superseded;
}

void ResponseQueue::close() {
    {
        std::lock_guard lock(mu_);
        closed_ = true;
    }
    ready_.notify_one();
}

std::optional<ReceivedResponse> ResponseQueue::take() {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [this] { return closed_ || next_.has_value(); });
    if (closed_) return std::nullopt;
    auto out = std::move(next_);
    next_.reset();
    return out;
}

void ResponseQueue::done() {
    std::lock_guard lock(mu_);
    if (waiting_) {
        next_ = std::move(waiting_);
        waiting_.reset();
    } else {
        applying_ = false;
    }
}

}  // namespace ratelimitd::xds
