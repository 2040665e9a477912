// Whether a check is traced and under which parent: the sampler over the caller's W3C headers,
// and the sink its spans go to. Shared by every server thread (it holds no mutable state).
#pragma once

#include "ratelimitd/trace/sampler.hpp"
#include "ratelimitd/trace/span.hpp"
#include "ratelimitd/trace/span_sink.hpp"

#include <chrono>
#include <optional>
#include <span>
#include <string_view>

namespace ratelimitd::trace {

/// A sampled check's identity: its server span's ids and parent.
struct TracedCheck {
    TraceId trace_id{};
    SpanId span_id{};
    SpanId parent_span_id{};  ///< all zero: a new root
    std::string tracestate;
};

class Tracer {
public:
    Tracer(Sampler sampler, SpanSink& sink) noexcept : sampler_(sampler), sink_(sink) {}

    /// The check's identity when it is sampled, else nullopt (nothing is recorded). A missing or
    /// malformed `traceparent` makes a new root; `tracestate` is kept only beside a valid parent.
    [[nodiscard]] std::optional<TracedCheck> start(std::string_view traceparent, std::string_view tracestate) const;

    /// A server span of `check`, from `arrived` (the request's steady instant) to now, in Unix time.
    [[nodiscard]] static Span server_span(const TracedCheck& check, std::string_view name,
                                          std::chrono::steady_clock::time_point arrived);
    /// A child of the server span `parent`.
    [[nodiscard]] static Span child_span(const Span& parent, std::string_view name, SpanKind kind);

    /// server_span and child_span into a span that is reused: its strings and attribute list are
    /// emptied, not freed, so a thread that traced one check allocates nothing for the next.
    static void start_server_span(Span& span, const TracedCheck& check, std::string_view name,
                                  std::chrono::steady_clock::time_point arrived);
    static void start_child_span(Span& span, const Span& parent, std::string_view name, SpanKind kind);

    /// The calling thread's two spans for a check (its server span and its store call's), reused
    /// through start_*_span and lent to submit_view: a door traces one check at a time per thread.
    [[nodiscard]] static std::span<Span, 2> thread_spans() noexcept;

    void submit(std::vector<Span>&& spans) const noexcept { sink_.submit(std::move(spans)); }
    void submit_view(std::span<const Span> spans) const noexcept { sink_.submit_view(spans); }

private:
    Sampler sampler_;
    SpanSink& sink_;
};

/// Unix nanoseconds of a steady instant, by the offset between the two clocks now.
[[nodiscard]] std::uint64_t unix_nanos_of(std::chrono::steady_clock::time_point instant,
                                          std::chrono::steady_clock::time_point steady_now,
                                          std::chrono::system_clock::time_point system_now) noexcept;

}  // namespace ratelimitd::trace
