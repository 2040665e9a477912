// EncodedSpanQueue: the encoding outside the lock, a copy of a few hundred bytes inside it.
#include "ratelimitd/otlp/encoded_span_queue.hpp"

#include "ratelimitd/otlp/otlp_encoder.hpp"

namespace ratelimitd::otlp {
namespace {

// The calling thread's encoding buffer: its capacity is kept from check to check.
std::string& thread_buffer() noexcept {
    thread_local std::string buffer;
    return buffer;
}

// Emptied strings kept for later chunks: a few cover the export thread's lag behind the checks.
constexpr std::size_t spare_strings = 4;

}  // namespace

EncodedSpanQueue::EncodedSpanQueue(std::size_t capacity, std::size_t batch)
    : capacity_(capacity == 0 ? 1 : capacity), batch_(batch == 0 ? 1 : batch) {
    spare_.reserve(spare_strings);  // take() then keeps a string without allocating
}

void EncodedSpanQueue::submit_view(std::span<const trace::Span> spans) noexcept {
    if (spans.empty()) return;
    bool queued = false;
    bool batch_full = false;
    try {
        const std::string_view encoded = encode_spans(spans, thread_buffer());
        const std::lock_guard lock(mutex_);
        if (spans_ + spans.size() <= capacity_) {
            append(encoded, spans.size());
            queued = true;
            batch_full = chunks_.back().spans >= batch_;
        }
    } catch (...) {
        // bad_alloc: dropped like a full queue's, below.
    }
    if (!queued) {
        dropped_.fetch_add(spans.size(), std::memory_order_relaxed);
        return;
    }
    if (batch_full && wake_) {
        try {
            wake_();
        } catch (...) {
            // The exporter's own wake-up failed: the schedule delay still drains the queue.
        }
    }
}

void EncodedSpanQueue::append(std::string_view encoded, std::size_t spans) {
    if (chunks_.empty() || chunks_.back().spans >= batch_) {
        chunks_.emplace_back();
        if (!spare_.empty()) {
            chunks_.back().bytes.swap(spare_.back());
            spare_.pop_back();
        } else {
            // Room for a batch of checks like this one: growing by doubling would copy the chunk's
            // bytes again and again.
            chunks_.back().bytes.reserve(encoded.size() * (batch_ / spans + 1));
        }
    }
    chunks_.back().bytes += encoded;
    chunks_.back().spans += spans;
    spans_ += spans;
}

bool EncodedSpanQueue::take(SpanChunk& out) {
    const std::lock_guard lock(mutex_);
    if (chunks_.empty()) return false;
    out.bytes.swap(chunks_.front().bytes);
    out.spans = chunks_.front().spans;
    spans_ -= out.spans;
    // The chunk's string now holds out's old one: kept for a later chunk.
    std::string old = std::move(chunks_.front().bytes);
    chunks_.pop_front();
    old.clear();
    if (old.capacity() != 0 && spare_.size() < spare_strings) spare_.push_back(std::move(old));
    return true;
}

std::size_t EncodedSpanQueue::size() const {
    const std::lock_guard lock(mutex_);
    return spans_;
}

}  // namespace ratelimitd::otlp
