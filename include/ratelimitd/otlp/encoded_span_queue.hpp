// The bounded queue between the checks and the exporter, holding spans already encoded: a
// check's spans become OTLP bytes on its own thread (a per-thread buffer, no lock) and are
// appended to the newest chunk under a short lock; the export thread takes a whole chunk, one
// batch, by swapping strings. Full: the check's spans are dropped and counted. A check never
// waits for export.
#pragma once

#include "ratelimitd/trace/span_sink.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::otlp {

/// A batch: append_spans' bytes of `spans` spans, whole checks only.
struct SpanChunk {
    std::string bytes;
    std::size_t spans = 0;
};

class EncodedSpanQueue final : public trace::SpanSink {
public:
    /// `capacity`: spans held at most (OTEL_BSP_MAX_QUEUE_SIZE's meaning; at least 1);
    /// `batch`: spans a chunk is closed at (OTEL_BSP_MAX_EXPORT_BATCH_SIZE; a check's spans are
    /// never split, so a chunk may pass it by the last check's few).
    EncodedSpanQueue(std::size_t capacity, std::size_t batch);

    /// Called (outside the lock, on the submitting thread) when a chunk is full: the exporter's
    /// wake-up, so that a busy server's batches leave as soon as they are whole instead of
    /// waiting for the schedule delay (the OpenTelemetry batch processor's rule). Set before any
    /// submit.
    void on_full_batch(std::function<void()> wake) { wake_ = std::move(wake); }

    /// Every span of the call, or none of them when they do not all fit (a trace with the server
    /// span but not its children, or the reverse, would mislead); encoded before the lock.
    void submit_view(std::span<const trace::Span> spans) noexcept override;
    void submit(std::vector<trace::Span>&& spans) noexcept override { submit_view(spans); }

    /// The oldest chunk swapped into `out` (false, `out` untouched, when none waits); `out`'s old
    /// string is kept to hold a later chunk, so a steady flow allocates nothing.
    bool take(SpanChunk& out);

    /// Spans waiting.
    [[nodiscard]] std::size_t size() const;
    /// Spans dropped because the queue was full (or an encoding could not allocate).
    [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

private:
    /// Under the lock: `encoded` (`spans` spans) onto the newest chunk, or a new one.
    void append(std::string_view encoded, std::size_t spans);

    const std::size_t capacity_;
    const std::size_t batch_;
    mutable std::mutex mutex_;
    std::deque<SpanChunk> chunks_;
    std::size_t spans_ = 0;
    std::vector<std::string> spare_;  ///< emptied chunks' strings, capacity kept (room reserved)
    std::atomic<std::uint64_t> dropped_{0};
    std::function<void()> wake_;
};

}  // namespace ratelimitd::otlp
