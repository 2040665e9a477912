// /v1/auth: original request from proxy headers in, answer for the proxy out.
#include "ratelimitd/http/auth_codec.hpp"

#include "ratelimitd/core/query_string.hpp"
#include "ratelimitd/headers/rate_limit_fields.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/http/json_writer.hpp"
#include "ratelimitd/http/rate_limit_headers.hpp"

#include <boost/beast/core/string.hpp>

#include <algorithm>
#include <iterator>

namespace ratelimitd::http {

namespace {

/// Calls `take` with each value of header `name`, in arrival order. A walk of the request's
/// few fields comparing lengths first, then the names without case: Beast's own look-up
/// (equal_range over its ordered index: two descents of case-insensitive comparisons) cost
/// about 460 instructions a name under callgrind, and /v1/auth asks for three.
template <class Take>
void each_value(const Request& req, std::string_view name, Take take) {
    for (const auto& field : req) {
        const auto n = field.name_string();
        if (n.size() == name.size() && boost::beast::iequals(n, boost::beast::string_view(name.data(), name.size()))) {
            const auto v = field.value();
            take(std::string_view(v.data(), v.size()));
        }
    }
}

policy::HeaderList header_values(const Request& req, std::string_view name) {
    policy::HeaderList out;
    each_value(req, name, [&](std::string_view v) { out.push_back(v); });
    return out;
}

/// The single value of an original-request header, a view into `req`; nullopt when absent;
/// an error when sent twice (which of two values to trust is not ours to guess). A view: the
/// answer is copied once, into the AuthQuery (strings returned through the result and the
/// optional were moved four times, each an SSO copy).
result<std::optional<std::string_view>> single_header(const Request& req, std::string_view name) {
    std::optional<std::string_view> value;
    bool twice = false;
    each_value(req, name, [&](std::string_view v) {
        twice = twice || value.has_value();
        value = v;
    });
    if (twice) return Problem{errc::invalid_request, std::string(name) + ": given more than once"};
    return value;
}

/// deny_status from the query string of /v1/auth: three digits, 400..599.
result<std::optional<int>> deny_status_of(std::string_view query) {
    std::optional<int> status;
    while (const auto item = next_query_item(query)) {
        if (item->name != "deny_status") continue;
        if (status) return Problem{errc::invalid_request, "deny_status: given more than once"};
        const std::string_view v = item->value;
        const bool digits = v.size() == 3 && v.find_first_not_of("0123456789") == std::string_view::npos;
        const int n = digits ? (v[0] - '0') * 100 + (v[1] - '0') * 10 + (v[2] - '0') : 0;
        if (n < 400 || n > 599) {
            std::string shown(v.substr(0, 16));
            for (char& c : shown) {
                if (c < 0x20 || c > 0x7e || c == '"') c = '?';
            }
            return Problem{errc::invalid_request, "deny_status: expected an integer 400..599, got \"" + shown + "\""};
        }
        status = n;
    }
    return status;
}

}  // namespace

bool is_auth_path(std::string_view path) noexcept {
    return path == auth_path || (path.starts_with(auth_path) && path.size() > auth_path.size() &&
                                 path[auth_path.size()] == '/');
}

result<AuthQuery> parse_auth_request(const Request& req, std::string_view path) {
    AuthQuery q;
    const std::string_view own_method = req.method_string();
    const std::string_view target = req.target();

    std::optional<std::string_view> uri;
    std::optional<std::string_view> method;
    // nginx first: its proxy_set_header replaces a client's copy of the header, so behind
    // nginx the X-Original-* values are always nginx's own.
    for (const auto& [uri_header, method_header] :
         {std::pair<std::string_view, std::string_view>{"X-Original-URI", "X-Original-Method"},
          {"X-Forwarded-Uri", "X-Forwarded-Method"}}) {
        auto u = single_header(req, uri_header);
        if (!u) return u.error();
        if (!*u) continue;
        auto m = single_header(req, method_header);
        if (!m) return m.error();
        uri = **u;
        method = *m;
        break;
    }
    if (!uri && path != auth_path) uri = target.substr(auth_path.size());  // /v1/auth/<rest>
    q.uri = uri.value_or(target);
    q.method = method.value_or(own_method);

    if (path == auth_path) {
        const auto mark = target.find('?');
        auto status = deny_status_of(mark == std::string_view::npos ? std::string_view{} : target.substr(mark + 1));
        if (!status) return status.error();
        q.deny_status = *status;
    }
    return q;
}

policy::IdentityInput identity_input(const Request& req, std::string_view peer) {
    policy::IdentityInput in;
    in.headers = [&req](std::string_view name) { return header_values(req, name); };
    in.peer = peer;
    return in;
}

Response make_auth_response(const service::Decision& d, int deny_status, unsigned version, bool keep_alive,
                            bool head) {
    return make_auth_answer(d, deny_status, version, keep_alive, head).to_response();
}

Answer make_auth_answer(const service::Decision& d, int deny_status, unsigned version, bool keep_alive, bool head) {
    const bool allowed = d.verdict.allowed;
    const auto status = allowed ? bhttp::status::ok : static_cast<bhttp::status>(deny_status);
    const bool numbers = !d.degraded && d.limited && !d.verdict.windows.empty();
    JsonWriter body;
    body.begin_object();
    body.key("allowed").boolean(allowed);
    if (d.degraded) {
        if (!allowed) body.key("retry_after").number(1);
        body.key("degraded").boolean(true);
    } else if (numbers && !allowed) {
        const auto& w = d.verdict.reported();
        body.key("policy").string(w.policy);
        body.key("retry_after").number(headers::retry_after_of(w));
    }
    body.end_object();
    // An allow has no body (Content-Length: 0): nginx's auth_request keeps its upstream
    // connection only when no body is left unread, and no proxy shows an allow's body to
    // anyone. A deny keeps its body: Traefik, Caddy and Envoy pass it to the client. A HEAD
    // answer has no body either way.
    const bool bodyless = head || allowed;
    RenderedAnswer res = json_answer(status, bodyless ? PooledString() : body.take(), version, keep_alive);
    if (d.degraded) {
        res.add_field("X-RateLimit-Degraded", to_string(d.store_error));
        if (!allowed) res.add_field("Retry-After", "1");
    } else if (numbers) {
        set_rate_limit_headers(d.verdict, res);
    }
    return res;
}

}  // namespace ratelimitd::http
