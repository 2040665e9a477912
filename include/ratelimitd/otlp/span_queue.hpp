// A bounded queue of span objects: a check's spans are appended under a short lock or, when the
// queue is full, dropped and counted. The exporter no longer reads it (it drains
// EncodedSpanQueue, whose spans are encoded at submit); it is kept for a sink that must hold
// spans as objects, and its unit test still holds it to the same all-or-none contract.
#pragma once

#include "ratelimitd/trace/span_sink.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace ratelimitd::otlp {

class SpanQueue final : public trace::SpanSink {
public:
    /// `capacity`: spans held at most (OTEL_BSP_MAX_QUEUE_SIZE's meaning; at least 1).
    explicit SpanQueue(std::size_t capacity) noexcept : capacity_(capacity == 0 ? 1 : capacity) {}

    /// Every span of the call, or none of them when they do not all fit (a trace with the
    /// server span but not its children, or the reverse, would mislead).
    void submit(std::vector<trace::Span>&& spans) noexcept override;

    /// Up to `most` spans, oldest first (the exporter's batch).
    [[nodiscard]] std::vector<trace::Span> take(std::size_t most);

    [[nodiscard]] std::size_t size() const;
    [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

private:
    const std::size_t capacity_;
    mutable std::mutex mutex_;
    std::deque<trace::Span> spans_;
    std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace ratelimitd::otlp
