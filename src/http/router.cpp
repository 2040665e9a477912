// Router: the endpoint table, request ids, HTTP metrics and the access log.
#include "ratelimitd/http/router.hpp"

#include "ratelimitd/http/admin_endpoints.hpp"
#include "ratelimitd/http/auth_codec.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/request_tokens.hpp"
#include "ratelimitd/policy/planner.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <random>

namespace ratelimitd::http {

namespace net = boost::asio;

namespace {

Response plain_json(const Request& req, bhttp::status status, std::string body) {
    Response res{status, req.version()};
    res.set(bhttp::field::content_type, "application/json");
    res.set(bhttp::field::cache_control, "no-store");
    res.keep_alive(req.keep_alive());
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

Response method_not_allowed(const Request& req, std::string_view path, std::string_view allow) {
    auto res = make_error_response(
        Problem{errc::method_not_allowed, "method: " + std::string(req.method_string()) +
                                              " is not allowed on " + std::string(path) + "; use " +
                                              std::string(allow)},
        req.version(), req.keep_alive());
    res.set(bhttp::field::allow, allow);
    return res;
}

std::string new_request_id() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static constexpr char hex[] = "0123456789abcdef";
    std::string id(16, '0');
    auto v = rng();
    for (auto& c : id) {
        c = hex[v & 0xf];
        v >>= 4;
    }
    return id;
}

/// The route label for metrics: a known endpoint, or "other" (bounded cardinality).
std::string_view route_label(std::string_view path) {
    for (std::string_view known : {"/v1/check", "/v1/auth", "/healthz", "/readyz", "/metrics", "/v1/policies",
                                   "/v1/peek", "/v1/reset"}) {
        if (path == known) return known;
    }
    if (is_auth_path(path)) return "/v1/auth";  // /v1/auth/<original path> (Envoy)
    return "other";
}

}  // namespace

net::awaitable<Response> Router::handle(Request req, RequestContext ctx) {
    const std::string_view target = req.target();
    const std::string_view path = target.substr(0, target.find('?'));
    const std::string_view caller_id = req["X-Request-Id"];
    const std::string request_id = is_sane_request_id(caller_id) ? std::string(caller_id) : new_request_id();

    auto& metrics = service_.metrics();
    metrics.request_started();
    std::optional<Response> routed;
    try {
        routed = co_await route(req, path, ctx, request_id);
    } catch (const std::exception& e) {
        // The unit of work is one request: a library call that threw (out of memory, a bug)
        // answers 500 and is logged; it never ends the session or the process.
        spdlog::error("request_id={} path={}: answered 500 after an unexpected exception: {}", request_id,
                      route_label(path), e.what());
        routed = plain_json(req, bhttp::status::internal_server_error,
                            R"({"error":"internal_error","detail":"the request could not be handled"})");
    }
    Response res = std::move(*routed);
    metrics.request_finished();
    metrics.count_http(route_label(path), res.result_int());
    res.set("X-Request-Id", request_id);
    co_return res;
}

net::awaitable<Response> Router::route(const Request& req, std::string_view path, const RequestContext& ctx,
                                       const std::string& request_id) {
    const auto method = req.method();
    // Any method: Envoy asks with the original one.
    if (is_auth_path(path)) co_return co_await auth(req, path, ctx, request_id);
    if (path == "/v1/check") {
        if (method == bhttp::verb::post || method == bhttp::verb::get) co_return co_await check(req, request_id);
        co_return method_not_allowed(req, path, "GET, POST");
    }
    if (path == "/healthz") {
        if (method != bhttp::verb::get) co_return method_not_allowed(req, path, "GET");
        co_return plain_json(req, bhttp::status::ok, R"({"status":"ok"})");
    }
    if (path == "/readyz") {
        if (method != bhttp::verb::get) co_return method_not_allowed(req, path, "GET");
        co_return co_await readyz(req);
    }
    if (path == "/metrics") {
        if (method != bhttp::verb::get) co_return method_not_allowed(req, path, "GET");
        Response res{bhttp::status::ok, req.version()};
        res.set(bhttp::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
        res.set(bhttp::field::cache_control, "no-store");
        res.keep_alive(req.keep_alive());
        res.body() = service_.metrics().render(options_.version, options_.store_name);
        res.prepare_payload();
        co_return res;
    }
    if (is_admin_path(path)) co_return co_await admin(req, path, ctx);
    co_return make_error_response(
        Problem{errc::not_found, "path: " + std::string(path.substr(0, 200)) + " is not an endpoint"},
        req.version(), req.keep_alive());
}

net::awaitable<Response> Router::check(const Request& req, const std::string& request_id) {
    const std::string_view target = req.target();
    result<check::CheckRequest> parsed;
    if (req.method() == bhttp::verb::post) {
        parsed = parse_check_json(req.body());
    } else {
        const auto q = target.find('?');
        parsed = parse_check_query(q == std::string_view::npos ? std::string_view{} : target.substr(q + 1));
    }
    if (!parsed) co_return make_error_response(parsed.error(), req.version(), req.keep_alive());

    auto plan = policy::plan(service_.registry(), *parsed);
    if (!plan) co_return make_error_response(plan.error(), req.version(), req.keep_alive());
    const auto decision = co_await service_.decide(std::move(*plan));
    auto res = make_check_response(decision, req.version(), req.keep_alive());
    access_log(decision, res.result_int(), request_id);
    co_return res;
}

net::awaitable<Response> Router::auth(const Request& req, std::string_view path, const RequestContext& ctx,
                                      const std::string& request_id) {
    auto query = parse_auth_request(req, path);
    if (!query) co_return make_error_response(query.error(), req.version(), req.keep_alive());
    // One snapshot for routes, identity sources and the check: a reload cannot mix two.
    const auto registry = service_.registry();
    const auto input = identity_input(req, ctx.peer);
    auto plan = policy::plan(registry, policy::AuthRequest{query->method, query->uri, input,
                                                           effective_hash_secret(options_.hash_secret, *registry)});
    if (!plan) co_return make_error_response(plan.error(), req.version(), req.keep_alive());
    const auto decision = co_await service_.decide(std::move(*plan));
    const int deny_status = query->deny_status.value_or(registry->auth.deny_status);
    auto res = make_auth_response(decision, deny_status, req.version(), req.keep_alive(),
                                  req.method() == bhttp::verb::head);
    access_log(decision, res.result_int(), request_id);
    co_return res;
}

void Router::access_log(const service::Decision& d, unsigned status, const std::string& request_id) {
    // Shadow denials are what a limit's rollout watches: logged whatever the mode, within the
    // same sampling and per-second cap.
    if (!d.shadow_denied) {
        if (options_.access_log == AccessLogMode::off) return;
        if (options_.access_log == AccessLogMode::denied && d.verdict.allowed) return;
    }
    if (options_.access_log_sample < 1.0) {
        static thread_local std::minstd_rand rng{std::random_device{}()};
        if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) >= options_.access_log_sample) return;
    }
    // At most access_log_per_second lines per second on this thread, so a flood of denials
    // cannot turn into a flood of log lines.
    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::steady_clock::now().time_since_epoch()).count();
    if (now_s != log_second_) {
        log_second_ = now_s;
        log_lines_ = 0;
    }
    if (++log_lines_ > options_.access_log_per_second) {
        service_.metrics().count_access_log_dropped();
        return;
    }
    const auto verdict = d.degraded ? (d.verdict.allowed ? "degraded_allowed" : "failed_closed")
                                    : (!d.verdict.allowed ? "denied" : d.shadow_denied ? "shadow_denied" : "allowed");
    spdlog::info("access request_id={} policy={} tenant={} scope={} verdict={} status={}", request_id, d.policy,
                 d.tenant, d.scope, verdict, status);
}

net::awaitable<Response> Router::readyz(const Request& req) {
    const std::string_view target = req.target();
    const auto q = target.find('?');
    const std::string_view mode = q == std::string_view::npos ? "mode=shared" : target.substr(q + 1);
    if (mode != "mode=shared" && mode != "mode=sidecar") {
        co_return make_error_response(
            Problem{errc::invalid_request, "query: /readyz takes mode=shared (the default) or mode=sidecar"},
            req.version(), req.keep_alive());
    }
    const bool ok = co_await service_.store().ready();
    // A sidecar answers its own pod's checks by each policy's on_store_error while the store is
    // down; failing its readiness then would take every app pod out of its Service at once.
    if (mode == "mode=sidecar") {
        co_return plain_json(req, bhttp::status::ok,
                             ok ? R"({"status":"ready","store":"ready"})" : R"({"status":"ready","store":"not_ready"})");
    }
    co_return plain_json(req, ok ? bhttp::status::ok : bhttp::status::service_unavailable,
                         ok ? R"({"status":"ready"})" : R"({"status":"not_ready"})");
}

net::awaitable<Response> Router::admin(const Request& req, std::string_view path, const RequestContext& ctx) {
    co_return co_await handle_admin(req, path, service_, options_.admin_token, ctx.peer);
}

}  // namespace ratelimitd::http
