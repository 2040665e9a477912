// Tracer: the W3C headers read, the sampler asked, spans given their ids and Unix times.
#include "ratelimitd/trace/tracer.hpp"

#include "ratelimitd/trace/id_generator.hpp"
#include "ratelimitd/trace/traceparent.hpp"
#include "ratelimitd/trace/tracestate.hpp"

#include <array>

namespace ratelimitd::trace {

std::optional<TracedCheck> Tracer::start(std::string_view traceparent, std::string_view tracestate) const {
    const auto parent = traceparent.empty() ? std::nullopt : parse_traceparent(traceparent);
    TracedCheck check;
    if (parent) {
        if (!sampler_.should_sample(parent->trace_id, &*parent)) return std::nullopt;
        check.trace_id = parent->trace_id;
    } else {
        // A root: the ratio is decided on the id's sampled half before the rest is drawn.
        const std::uint64_t low = random_word();
        if (!sampler_.should_sample_root(low)) return std::nullopt;
        check.trace_id = trace_id_ending_with(low);
    }
    check.span_id = new_span_id();
    if (parent) {
        check.parent_span_id = parent->span_id;
        check.tracestate = normalize_tracestate(tracestate).value_or(std::string{});
    }
    return check;
}

std::uint64_t unix_nanos_of(std::chrono::steady_clock::time_point instant,
                            std::chrono::steady_clock::time_point steady_now,
                            std::chrono::system_clock::time_point system_now) noexcept {
    const auto age = std::chrono::duration_cast<std::chrono::nanoseconds>(steady_now - instant);
    const auto unix_now = std::chrono::duration_cast<std::chrono::nanoseconds>(system_now.time_since_epoch());
    return static_cast<std::uint64_t>((unix_now - age).count());
}

void Tracer::start_server_span(Span& span, const TracedCheck& check, std::string_view name,
                               std::chrono::steady_clock::time_point arrived) {
    span.trace_id = check.trace_id;
    span.span_id = check.span_id;
    span.parent_span_id = check.parent_span_id;
    span.tracestate.assign(check.tracestate);
    span.name.assign(name);
    span.kind = SpanKind::server;
    span.status = StatusCode::unset;
    span.status_message.clear();
    span.attributes.clear();
    span.attributes.reserve(typical_attributes);
    const auto steady_now = std::chrono::steady_clock::now();
    const auto system_now = std::chrono::system_clock::now();
    // An unset instant (a door that did not stamp its request) starts the span now.
    const auto start = arrived == std::chrono::steady_clock::time_point{} ? steady_now : arrived;
    span.start_unix_nano = unix_nanos_of(start, steady_now, system_now);
    span.end_unix_nano = unix_nanos_of(steady_now, steady_now, system_now);
}

void Tracer::start_child_span(Span& span, const Span& parent, std::string_view name, SpanKind kind) {
    span.trace_id = parent.trace_id;
    span.span_id = new_span_id();
    span.parent_span_id = parent.span_id;
    span.tracestate.assign(parent.tracestate);
    span.name.assign(name);
    span.kind = kind;
    span.start_unix_nano = 0;
    span.end_unix_nano = 0;
    span.status = StatusCode::unset;
    span.status_message.clear();
    span.attributes.clear();
}

Span Tracer::server_span(const TracedCheck& check, std::string_view name,
                         std::chrono::steady_clock::time_point arrived) {
    Span span;
    start_server_span(span, check, name, arrived);
    return span;
}

Span Tracer::child_span(const Span& parent, std::string_view name, SpanKind kind) {
    Span span;
    start_child_span(span, parent, name, kind);
    return span;
}

std::span<Span, 2> Tracer::thread_spans() noexcept {
    thread_local std::array<Span, 2> spans;
    return spans;
}

}  // namespace ratelimitd::trace
