// The gRPC door's span: metadata in, one server span out. Envoy sends W3C headers as metadata
// when its tracer is OpenTelemetry; other propagation formats are not read (a new root).
#include "ratelimitd/grpc/rls_call_span.hpp"

#include "ratelimitd/road/call_span.hpp"

namespace ratelimitd::rls {
namespace {

std::string_view metadata(const grpc::CallbackServerContext& context, const char* key) {
    const auto& all = context.client_metadata();
    const auto found = all.find(key);
    if (found == all.end()) return {};
    return {found->second.data(), found->second.size()};
}

}  // namespace

std::shared_ptr<const RlsTrace> start_rls_trace(const trace::Tracer& tracer, const grpc::CallbackServerContext& context,
                                                const std::string& store_name) {
    auto check = tracer.start(metadata(context, "traceparent"), metadata(context, "tracestate"));
    if (!check) return nullptr;
    return std::make_shared<const RlsTrace>(RlsTrace{tracer, std::move(*check), store_name});
}

void trace_rls_call(const RlsTrace& trace, const RlsInstants& at, const road::Call* decided, std::string_view domain,
                    grpc::StatusCode status) noexcept {
    try {
        // The thread's spans, reused: lent to the sink, which encodes them before submit returns.
        const auto spans = trace::Tracer::thread_spans();
        trace::Span& span = spans[0];
        trace::Tracer::start_server_span(span, trace.check,
                                         "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit", at.arrived);
        span.add("rpc.system", "grpc");
        span.add("rpc.service", "envoy.service.ratelimit.v3.RateLimitService");
        span.add("rpc.method", "ShouldRateLimit");
        span.add("rpc.grpc.status_code", static_cast<std::int64_t>(status));
        if (!domain.empty()) span.add("ratelimit.domain", std::string(domain));
        // The conventions' server rule: UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL,
        // UNAVAILABLE and DATA_LOSS are errors; a client's INVALID_ARGUMENT is not.
        switch (status) {
        case grpc::StatusCode::UNKNOWN:
        case grpc::StatusCode::DEADLINE_EXCEEDED:
        case grpc::StatusCode::UNIMPLEMENTED:
        case grpc::StatusCode::INTERNAL:
        case grpc::StatusCode::UNAVAILABLE:
        case grpc::StatusCode::DATA_LOSS:
            span.status = trace::StatusCode::error;
            break;
        default:
            break;
        }
        if (decided != nullptr) road::add_call_attributes(span, *decided);
        const bool asked_store = decided != nullptr && !decided->problem && !decided->never_asked &&
                                 at.handed != std::chrono::steady_clock::time_point{};
        if (!asked_store) return trace.tracer.submit_view(spans.first(1));
        road::store_span(spans[1], span, *decided, trace.store_name, at.handed, at.answered);
        if (!domain.empty()) spans[1].add("ratelimit.domain", std::string(domain));
        trace.tracer.submit_view(spans);
    } catch (...) {
        // bad_alloc: the span is lost, the answer is not.
    }
}

}  // namespace ratelimitd::rls
