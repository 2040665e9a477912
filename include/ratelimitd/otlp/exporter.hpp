// The export thread: every schedule delay, when the queue has a full batch, or at stop, it
// takes batches (chunks of spans the checks encoded) from the queue and sends each, behind the
// request head it writes, to the collector, OTLP/HTTP protobuf or OTLP/gRPC, retrying a
// retryable failure with backoff within the timeout. It never touches a check: the queue is all
// they share.
#pragma once

#include "ratelimitd/otlp/exporter_target.hpp"
#include "ratelimitd/otlp/otlp_encoder.hpp"
#include "ratelimitd/otlp/encoded_span_queue.hpp"
#include "ratelimitd/otlp/transport.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace ratelimitd::otlp {

struct ExporterOptions {
    Protocol protocol = Protocol::http_protobuf;
    ExporterTarget target;
    ServiceResource resource;
    std::chrono::milliseconds schedule_delay{1000};  ///< OTEL_BSP_SCHEDULE_DELAY
    std::size_t max_batch = 512;                     ///< OTEL_BSP_MAX_EXPORT_BATCH_SIZE: the queue's chunk
    std::chrono::milliseconds timeout{10000};        ///< OTEL_EXPORTER_OTLP_TIMEOUT: one batch, retries included
    int max_attempts = 5;                            ///< a batch's tries before it is dropped (counted)
    std::chrono::milliseconds first_backoff{100};    ///< doubled after each retryable failure
};

/// What the exporter did, for /metrics.
struct ExporterCounts {
    std::atomic<std::uint64_t> exported{0};       ///< spans the collector accepted
    std::atomic<std::uint64_t> failed{0};         ///< spans dropped after their batch's last try
    std::atomic<std::uint64_t> export_calls{0};   ///< requests sent, retries included
};

class Exporter {
public:
    Exporter(ExporterOptions options, EncodedSpanQueue& queue);
    ~Exporter();  ///< stops: the queued spans get one last export within the timeout
    Exporter(const Exporter&) = delete;
    Exporter& operator=(const Exporter&) = delete;

    void start();
    void stop();

    [[nodiscard]] const ExporterCounts& counts() const noexcept { return counts_; }
    /// ratelimitd_trace_spans_{exported,dropped,failed}_total and ratelimitd_trace_queue_spans, as
    /// Prometheus text (appended to /metrics).
    [[nodiscard]] std::string metrics_text() const;

private:
    void run();
    void export_batch(const SpanChunk& batch);

    ExporterOptions options_;
    EncodedSpanQueue& queue_;
    std::unique_ptr<Transport> transport_;
    SpanChunk batch_;   ///< the chunk being sent; its string goes back to the queue for reuse
    std::string head_;  ///< the batch's request head; its capacity is reused by the next batch
    ExporterCounts counts_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    bool batch_ready_ = false;  ///< the queue holds a full batch: export before the delay ends
    std::thread thread_;
};

}  // namespace ratelimitd::otlp
