// The endpoint table and what derives from it: lookup, methods, Allow, route labels.
#include "ratelimitd/http/endpoints.hpp"

#include "ratelimitd/http/router.hpp"

#include <array>
#include <utility>

namespace ratelimitd::http {

namespace {

// The names of the method bits, in the order Allow lists them.
constexpr std::array<std::pair<unsigned, std::string_view>, 2> method_names{{
    {methods::get, "GET"},
    {methods::post, "POST"},
}};

unsigned method_bit(bhttp::verb method) noexcept {
    switch (method) {
    case bhttp::verb::get: return methods::get;
    case bhttp::verb::post: return methods::post;
    default: return 0;
    }
}

bool matches(const Endpoint& e, std::string_view path) noexcept {
    if (path == e.path) return true;
    return e.subpaths && path.size() > e.path.size() && path.starts_with(e.path) && path[e.path.size()] == '/';
}

}  // namespace

// A friend of Router: the handlers are its private members.
std::span<const Endpoint> endpoint_table() noexcept {
    static const std::array<Endpoint, 14> table{{
        {"/v1/check", false, methods::get | methods::post, false, &Router::check},
        {"/v1/report", false, methods::post, false, &Router::report},
        // /v1/auth/<original path>: Envoy's ext_authz appends the request's path; any method,
        // because Envoy asks with the original one.
        {"/v1/auth", true, methods::any, false, &Router::auth},
        {"/healthz", false, methods::get, false, &Router::healthz},
        {"/readyz", false, methods::get, false, &Router::readyz},
        {"/metrics", false, methods::get, false, &Router::metrics_text},
        {"/v1/policies", false, methods::get, true, &Router::policies},
        {"/v1/peek", false, methods::get, true, &Router::peek},
        {"/v1/top", false, methods::get, true, &Router::top},
        {"/v1/reset", false, methods::post, true, &Router::reset},
        {"/v1/release", false, methods::post, false, &Router::release},
        // The status page holds no data; it applies the admin rules itself (status_page.hpp).
        {"/", false, methods::get, false, &Router::status_page},
        {"/v1/envoy/peek", false, methods::get, true, &Router::envoy_peek},
        {"/v1/envoy/reset", false, methods::post, true, &Router::envoy_reset},
    }};
    return table;
}

const Endpoint* find_endpoint(std::string_view path) noexcept {
    for (const Endpoint& e : endpoint_table()) {
        if (matches(e, path)) return &e;
    }
    return nullptr;
}

bool allows(const Endpoint& e, bhttp::verb method) noexcept {
    return e.methods == methods::any || (e.methods & method_bit(method)) != 0;
}

std::string allow_header(const Endpoint& e) {
    std::string out;
    for (const auto& [bit, name] : method_names) {
        if ((e.methods & bit) == 0) continue;
        if (!out.empty()) out += ", ";
        out += name;
    }
    return out;
}

std::string_view route_label(std::string_view path) noexcept {
    const Endpoint* e = find_endpoint(path);
    return e != nullptr ? e->path : "other";
}

}  // namespace ratelimitd::http
