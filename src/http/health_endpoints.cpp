// /healthz, /readyz and /metrics: the process's own health, the store's readiness (through the
// road) and the Prometheus text.
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"

namespace ratelimitd::http::handlers {

namespace net = boost::asio;

net::awaitable<Answer> healthz(EndpointServices&, const EndpointCall& call) {
    co_return json_response(call.req, bhttp::status::ok, R"({"status":"ok"})");
}

net::awaitable<Answer> readyz(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    const std::string_view target = req.target();
    const auto q = target.find('?');
    const std::string_view mode = q == std::string_view::npos ? "mode=shared" : target.substr(q + 1);
    if (mode != "mode=shared" && mode != "mode=sidecar") {
        co_return make_error_response(
            Problem{errc::invalid_request, "query: /readyz takes mode=shared (the default) or mode=sidecar"},
            req.version(), req.keep_alive());
    }
    // The Envoy domains come from xds_server and none has arrived: Envoy's calls would fail.
    if (s.road.registry()->awaiting_xds && !s.options.ready_before_xds_config) {
        co_return json_response(req, bhttp::status::service_unavailable,
                                R"({"status":"not_ready","config":"awaiting_xds"})");
    }
    const bool ok = co_await s.road.ready();
    // A sidecar answers its own pod's checks by each policy's on_store_error while the store is
    // down; failing its readiness then would take every app pod out of its Service at once.
    if (mode == "mode=sidecar") {
        co_return json_response(req, bhttp::status::ok, ok ? R"({"status":"ready","store":"ready"})"
                                                           : R"({"status":"ready","store":"not_ready"})");
    }
    co_return json_response(req, ok ? bhttp::status::ok : bhttp::status::service_unavailable,
                            ok ? R"({"status":"ready"})" : R"({"status":"not_ready"})");
}

net::awaitable<Answer> metrics_text(EndpointServices& s, const EndpointCall& call) {
    auto text = s.metrics.render(s.options.version, s.options.store_name);
    if (s.options.extra_metrics) text += s.options.extra_metrics();
    co_return make_response(bhttp::status::ok, "text/plain; version=0.0.4; charset=utf-8", std::move(text),
                            call.req.version(), call.req.keep_alive());
}

}  // namespace ratelimitd::http::handlers
