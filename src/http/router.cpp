// Router: the endpoint table.
#include "ratelimitd/http/router.hpp"

#include "ratelimitd/http/check_codec.hpp"

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

Response method_not_allowed(const Request& req, std::string_view allow) {
    auto res = make_error_response(
        Problem{errc::method_not_allowed,
                "method: " + std::string(req.method_string()) + " is not allowed on " +
                    std::string(req.target().substr(0, req.target().find('?'))) + "; use " +
                    std::string(allow)},
        req.version(), req.keep_alive());
    res.set(bhttp::field::allow, allow);
    return res;
}

}  // namespace

net::awaitable<Response> Router::handle(Request req) {
    const std::string_view target = req.target();
    const std::string_view path = target.substr(0, target.find('?'));
    const auto method = req.method();

    if (path == "/v1/check") {
        if (method == bhttp::verb::post || method == bhttp::verb::get) co_return co_await check(req);
        co_return method_not_allowed(req, "GET, POST");
    }
    if (path == "/healthz") {
        if (method != bhttp::verb::get) co_return method_not_allowed(req, "GET");
        co_return plain_json(req, bhttp::status::ok, R"({"status":"ok"})");
    }
    if (path == "/readyz") {
        if (method != bhttp::verb::get) co_return method_not_allowed(req, "GET");
        co_return co_await readyz(req);
    }
    co_return make_error_response(
        Problem{errc::not_found, "path: " + std::string(path.substr(0, 200)) + " is not an endpoint"},
        req.version(), req.keep_alive());
}

net::awaitable<Response> Router::check(const Request& req) {
    const std::string_view target = req.target();
    result<check::CheckRequest> parsed;
    if (req.method() == bhttp::verb::post) {
        parsed = parse_check_json(req.body());
    } else {
        const auto q = target.find('?');
        parsed = parse_check_query(q == std::string_view::npos ? std::string_view{} : target.substr(q + 1));
    }
    if (!parsed) co_return make_error_response(parsed.error(), req.version(), req.keep_alive());

    auto decision = co_await service_.check(std::move(*parsed));
    if (!decision) co_return make_error_response(decision.error(), req.version(), req.keep_alive());
    co_return make_check_response(*decision, req.version(), req.keep_alive());
}

net::awaitable<Response> Router::readyz(const Request& req) {
    const bool ok = co_await service_.store().ready();
    co_return plain_json(req, ok ? bhttp::status::ok : bhttp::status::service_unavailable,
                         ok ? R"({"status":"ready"})" : R"({"status":"not_ready"})");
}

}  // namespace ratelimitd::http
