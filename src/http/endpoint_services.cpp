// EndpointServices: the admin rule's audit lines, shared by the router and the report door, and
// each door call's server span.
#include "ratelimitd/http/endpoint_services.hpp"

#include "ratelimitd/http/admin_endpoints.hpp"
#include "ratelimitd/road/call_span.hpp"

namespace ratelimitd::http {

audit::Actor EndpointServices::actor(const EndpointCall& call) const {
    // Called only once admin_access allowed the caller: with a token set, it presented it.
    return {call.ctx.peer.empty() ? std::nullopt : std::optional<std::string>(call.ctx.peer),
            options.admin_token.has_value()};
}

void EndpointServices::audit_admin_call(const EndpointCall& call, std::string_view door, unsigned status) const {
    if (options.audit == nullptr) return;
    audit::Actor who = actor(call);
    if (status != 0) who.token = false;
    options.audit->admin_call(who, door, call.req.method_string(), status);
}

std::optional<Response> EndpointServices::give_back_refusal(const EndpointCall& call) const {
    auto refusal = admin_refusal(call.req, options.admin_token, call.ctx.peer, AdminAct::give_back);
    audit_admin_call(call, call.path, refusal ? refusal->result_int() : 0);
    return refusal;
}

// A door call's server span: OpenTelemetry's HTTP server conventions (span name "{method}
// {route}", http.request.method, http.route, url.path, http.response.status_code, error status
// on 5xx only: a 4xx is the client's, a 429 the check working) and the call's ratelimit.*.
void EndpointServices::trace_call(const EndpointCall& call, const road::Call& decided, unsigned status,
                                  std::chrono::steady_clock::time_point handed) const {
    const Request& req = call.req;
    // tracestate only beside a traceparent: a check without one pays a single header lookup.
    const std::string_view traceparent = req["traceparent"];
    const std::string_view tracestate = traceparent.empty() ? std::string_view{} : std::string_view(req["tracestate"]);
    const auto traced = options.tracer->start(traceparent, tracestate);
    if (!traced) return;
    const std::string_view method = req.method_string();
    // The thread's spans, reused: lent to the sink, which encodes them before submit returns.
    const auto spans = trace::Tracer::thread_spans();
    trace::Span& span = spans[0];
    trace::Tracer::start_server_span(span, *traced, method, call.ctx.arrived);
    span.name.append(" ").append(call.path);
    // A known verb's name is a literal of Beast's; another is copied.
    if (req.method() != boost::beast::http::verb::unknown) {
        span.add("http.request.method", trace::StaticText{boost::beast::http::to_string(req.method())});
    } else {
        span.add("http.request.method", std::string(method));
    }
    span.add("http.route", std::string(call.path));
    // The path only: a /v1/check query names the tenant, which a span must not carry.
    span.add("url.path", std::string(call.path));
    span.add("http.response.status_code", static_cast<std::int64_t>(status));
    span.add("network.protocol.version", req.version() == 10 ? "1.0" : "1.1");
    if (status >= 500) span.status = trace::StatusCode::error;
    road::add_call_attributes(span, decided);
    // A call refused as bad input asked no store: no child.
    if (decided.problem) return options.tracer->submit_view(spans.first(1));
    road::store_span(spans[1], span, decided, options.trace_store_name, handed, std::chrono::steady_clock::now());
    options.tracer->submit_view(spans);
}

}  // namespace ratelimitd::http
