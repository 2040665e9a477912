// envoyproxy/ratelimit's HTTP doors, served in ERL mode next to ratelimitd's
// own: GET /healthcheck, POST /json (ShouldRateLimit in protobuf JSON) and GET
// /rlconfig.
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace ratelimitd::http {

namespace net = boost::asio;

namespace {

std::string upper(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return out;
}

// One line per rule with a rate_limit, as envoyproxy/ratelimit's config dump
// writes it.
void dump_level(const policy::RlsLevel& level, std::string& out) {
    for (const auto& rule : level.rules) {
        if (rule.limit == policy::RlsRule::Limit::limited) {
            out += rule.label + ": unit=" + upper(policy::to_string(rule.unit)) +
                   " requests_per_unit=" + std::to_string(rule.requests_per_unit) +
                   ", shadow_mode: " + (rule.policy.shadow ? "true" : "false") +
                   ", quota_mode: " + (rule.quota_mode ? "true" : "false") + "\n";
        } else if (rule.limit == policy::RlsRule::Limit::unlimited) {
            out += rule.label + ": unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false\n";
        }
        dump_level(rule.children, out);
    }
}

}  // namespace

namespace handlers {

// 200 "OK" while healthy, else 500 with no body (envoyproxy/ratelimit's answer,
// which probes read by status only).
net::awaitable<Answer> healthcheck(EndpointServices& s, const EndpointCall& call) {
    bool healthy = true;
    if (s.options.healthcheck.needs_domain) {
        const auto registry = s.road.registry();
        healthy = registry->domains != nullptr && !registry->domains->by_name.empty();
    }
    if (healthy && s.options.healthcheck.pings_store) healthy = co_await s.road.ready();
    co_return make_response(healthy ? bhttp::status::ok : bhttp::status::internal_server_error,
                            "text/plain; charset=utf-8", healthy ? "OK" : "", call.req.version(),
                            call.req.keep_alive());
}

net::awaitable<Answer> rls_json(EndpointServices& s, const EndpointCall& call) {
    if (!s.options.rls_json)
        co_return make_error_response(Problem{errc::not_found, "path: /json is served in ERL mode only"},
                                      call.req.version(), call.req.keep_alive());
    const RlsJsonAnswer answer = co_await s.options.rls_json(s.road, call.req.body());
    const bool json = answer.status == 200 || answer.status == 429;
    co_return make_response(static_cast<bhttp::status>(answer.status),
                            json ? "application/json" : "text/plain; charset=utf-8", answer.body, call.req.version(),
                            call.req.keep_alive());
}

net::awaitable<Answer> rlconfig(EndpointServices& s, const EndpointCall& call) {
    const auto registry = s.road.registry();
    std::string out;
    if (registry->domains != nullptr) {
        for (const auto& [name, domain] : registry->domains->by_name) dump_level(domain.root, out);
    }
    co_return make_response(bhttp::status::ok, "text/plain; charset=utf-8", out, call.req.version(),
                            call.req.keep_alive());
}

}  // namespace handlers
}  // namespace ratelimitd::http
