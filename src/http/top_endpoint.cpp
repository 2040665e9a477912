// GET /v1/top: parameters checked first, then every thread's sketches gathered and merged.
#include "ratelimitd/http/top_endpoint.hpp"

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/core/percent.hpp"
#include "ratelimitd/core/query_string.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/http/json_writer.hpp"
#include "ratelimitd/service/top_board.hpp"

#include <charconv>

namespace ratelimitd::http {

namespace net = boost::asio;

namespace {


/// n: a decimal 1..k.
result<std::size_t> parse_n(std::string_view text, std::size_t k) {
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || n < 1 || n > k) {
        return invalid_request("n: must be a whole number from 1 to " + std::to_string(k) + " (top_k)");
    }
    return n;
}

/// One decoded `name=value` into `q`; `seen` holds the names met so far (bits).
std::optional<Problem> apply_parameter(std::string_view name, const std::string& value, std::size_t k, TopQuery& q,
                                       unsigned& seen) {
    const unsigned bit = name == "policy" ? 1u : name == "by" ? 2u : name == "n" ? 4u : 0u;
    if (bit == 0) return invalid_request("query: unknown parameter (allowed: policy, by, n)");
    if ((seen & bit) != 0) return invalid_request(std::string(name) + ": given more than once");
    seen |= bit;
    if (bit == 1) {
        if (value.empty()) return invalid_request("policy: must not be empty (leave it out for every policy)");
        q.policy = value;
    } else if (bit == 2) {
        if (value != "denied" && value != "admitted") return invalid_request("by: must be denied or admitted");
        q.by = value == "denied" ? service::TopBy::denied : service::TopBy::admitted;
    } else {
        auto n = parse_n(value, k);
        if (!n) return n.error();
        q.n = *n;
    }
    return std::nullopt;
}

PooledString top_json(const TopQuery& q, const service::TopOptions& options,
                      const std::vector<service::PolicyTop>& policies) {
    JsonWriter w(512);
    w.begin_object().key("by").string(q.by == service::TopBy::denied ? "denied" : "admitted");
    w.key("window_seconds").number(std::chrono::duration_cast<std::chrono::seconds>(options.window).count());
    w.key("k").number(static_cast<std::int64_t>(options.k));
    w.key("policies").begin_array();
    for (const auto& p : policies) {
        w.begin_object().key("policy").string(p.policy).key("tenants").begin_array();
        for (const auto& t : p.tenants) {
            w.begin_object().key("tenant").string(t.tenant);
            w.key("count").number(static_cast<std::int64_t>(t.count));
            w.key("error").number(static_cast<std::int64_t>(t.error)).end_object();
        }
        w.end_array().end_object();
    }
    w.end_array().end_object();
    return w.take();
}

}  // namespace

result<TopQuery> parse_top_query(std::string_view query, std::size_t k) {
    TopQuery q;
    unsigned seen = 0;
    while (const auto item = next_query_item(query)) {
        auto value = percent_decode(item->value, {.plus_is_space = true});
        if (!value) return invalid_request("query: a '%' without two hex digits after it");
        if (auto problem = apply_parameter(item->name, *value, k, q, seen)) return *problem;
    }
    return q;
}

namespace handlers {

net::awaitable<Answer> top(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    service::TopBoard* board = s.road.top_board();
    if (board == nullptr) {
        co_return make_error_response(
            Problem{errc::not_found, "/v1/top: heavy hitters are off (top_k is 0)"}, req.version(),
            req.keep_alive());
    }
    const std::string_view target = req.target();
    const auto mark = target.find('?');
    auto q = parse_top_query(mark == std::string_view::npos ? std::string_view{} : target.substr(mark + 1),
                             board->options().k);
    if (!q) co_return make_error_response(q.error(), req.version(), req.keep_alive());
    if (q->policy && s.road.registry()->find(*q->policy) == nullptr) {
        co_return make_error_response(Problem{errc::unknown_policy, "policy: not in the registry"}, req.version(),
                                      req.keep_alive());
    }
    auto policies = co_await board->gather(q->policy, q->by, q->n);
    if (q->policy && policies.empty()) policies.push_back({*q->policy, {}});  // named: listed even when quiet
    co_return json_response(req, bhttp::status::ok, top_json(*q, board->options(), policies));
}

}  // namespace handlers

}  // namespace ratelimitd::http
