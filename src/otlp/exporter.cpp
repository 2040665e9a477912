// Exporter: a plain thread waiting on a condition variable for the schedule delay; the transport
// does the I/O with its own deadline, so a dead collector holds this thread, never a check.
#include "ratelimitd/otlp/exporter.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::otlp {

Exporter::Exporter(ExporterOptions options, EncodedSpanQueue& queue)
    : options_(std::move(options)),
      queue_(queue),
      transport_(options_.protocol == Protocol::grpc ? make_grpc_transport(options_.target)
                                                     : make_http_transport(options_.target)) {
    queue_.on_full_batch([this] {
        {
            const std::lock_guard lock(mutex_);
            batch_ready_ = true;
        }
        wake_.notify_all();
    });
}

Exporter::~Exporter() {
    stop();
    queue_.on_full_batch({});  // the queue may outlive this exporter (no check submits by now)
}

void Exporter::start() { thread_ = std::thread([this] { run(); }); }

void Exporter::stop() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Exporter::run() {
    std::unique_lock lock(mutex_);
    while (true) {
        wake_.wait_for(lock, options_.schedule_delay, [this] { return stopping_ || batch_ready_; });
        const bool stopping = stopping_;
        batch_ready_ = false;
        lock.unlock();
        // Every full batch now, and the rest: the queue is drained at each wake-up.
        while (queue_.take(batch_)) export_batch(batch_);
        if (stopping) return;
        lock.lock();
    }
}

void Exporter::export_batch(const SpanChunk& batch) {
    encode_request_head(options_.resource, batch.bytes.size(), head_);
    const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
    auto backoff = options_.first_backoff;
    for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
        bool permanent = false;
        counts_.export_calls.fetch_add(1, std::memory_order_relaxed);
        if (transport_->send(head_, batch.bytes, deadline, permanent)) {
            counts_.exported.fetch_add(batch.spans, std::memory_order_relaxed);
            return;
        }
        if (permanent || std::chrono::steady_clock::now() + backoff >= deadline) break;
        // The wait is the export thread's alone; stop() cuts it short.
        std::unique_lock lock(mutex_);
        if (wake_.wait_for(lock, backoff, [this] { return stopping_; })) break;
        backoff *= 2;
    }
    counts_.failed.fetch_add(batch.spans, std::memory_order_relaxed);
    spdlog::warn("trace export to {}:{} failed: {} spans dropped", options_.target.host, options_.target.port,
                 batch.spans);
}

std::string Exporter::metrics_text() const {
    std::string out;
    const auto counter = [&out](const char* name, const char* help, std::uint64_t value) {
        out += "# HELP ";
        out += name;
        out += ' ';
        out += help;
        out += "\n# TYPE ";
        out += name;
        out += " counter\n";
        out += name;
        out += ' ';
        out += std::to_string(value);
        out += '\n';
    };
    counter("ratelimitd_trace_spans_exported_total", "Spans the OTLP collector accepted.",
            counts_.exported.load(std::memory_order_relaxed));
    counter("ratelimitd_trace_spans_dropped_total", "Spans dropped because the export queue was full.",
            queue_.dropped());
    counter("ratelimitd_trace_spans_failed_total", "Spans dropped after their batch's last export attempt failed.",
            counts_.failed.load(std::memory_order_relaxed));
    out += "# HELP ratelimitd_trace_queue_spans Spans waiting for export.\n# TYPE ratelimitd_trace_queue_spans gauge\n";
    out += "ratelimitd_trace_queue_spans " + std::to_string(queue_.size()) + "\n";
    return out;
}

}  // namespace ratelimitd::otlp
