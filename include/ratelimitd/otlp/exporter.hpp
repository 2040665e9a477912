// The export thread: every schedule delay (or at stop) it takes batches from the queue and sends
// each to the collector, OTLP/HTTP protobuf or OTLP/gRPC, retrying a retryable failure with
// backoff within the timeout. It never touches a check: the queue is all they share.
#pragma once

#include "ratelimitd/otlp/exporter_target.hpp"
#include "ratelimitd/otlp/otlp_encoder.hpp"
#include "ratelimitd/otlp/span_queue.hpp"
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
    std::size_t max_batch = 512;                     ///< OTEL_BSP_MAX_EXPORT_BATCH_SIZE
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
    Exporter(ExporterOptions options, SpanQueue& queue);
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
    void export_batch(std::vector<trace::Span> batch);

    ExporterOptions options_;
    SpanQueue& queue_;
    std::unique_ptr<Transport> transport_;
    std::string body_;  ///< the batch's OTLP bytes; its capacity is reused by the next batch
    ExporterCounts counts_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace ratelimitd::otlp
