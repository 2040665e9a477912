// SpanQueue: a deque under a mutex held only to move spans in or out.
#include "ratelimitd/otlp/span_queue.hpp"

#include <algorithm>

namespace ratelimitd::otlp {

void SpanQueue::submit(std::vector<trace::Span>&& spans) noexcept {
    try {
        const std::lock_guard lock(mutex_);
        if (spans_.size() + spans.size() <= capacity_) {
            for (auto& span : spans) spans_.push_back(std::move(span));
            return;
        }
    } catch (...) {
        // bad_alloc: dropped like a full queue's, below.
    }
    dropped_.fetch_add(spans.size(), std::memory_order_relaxed);
}

std::vector<trace::Span> SpanQueue::take(std::size_t most) {
    std::vector<trace::Span> batch;
    const std::lock_guard lock(mutex_);
    const std::size_t n = std::min(most, spans_.size());
    batch.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(spans_.front()));
        spans_.pop_front();
    }
    return batch;
}

std::size_t SpanQueue::size() const {
    const std::lock_guard lock(mutex_);
    return spans_.size();
}

}  // namespace ratelimitd::otlp
