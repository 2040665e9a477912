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

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/rlqs_rules.hpp"

#include <algorithm>
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

/// by: denied, admitted (policies) or demand (rlqs buckets; checked once all are read).
std::optional<Problem> apply_by(const std::string& value, TopQuery& q) {
    if (value != "denied" && value != "admitted" && value != "demand") {
        return invalid_request("by: must be denied, admitted (policies) or demand (rlqs)");
    }
    q.by = value == "admitted" ? service::TopBy::admitted : service::TopBy::denied;
    q.demand = value == "demand";
    return std::nullopt;
}

unsigned parameter_bit(std::string_view name) {
    if (name == "policy") return 1u;
    if (name == "by") return 2u;
    if (name == "n") return 4u;
    if (name == "rlqs") return 8u;
    return name == "rule" ? 16u : 0u;
}

/// One decoded `name=value` into `q`; `seen` holds the names met so far (bits).
std::optional<Problem> apply_parameter(std::string_view name, const std::string& value, std::size_t k, TopQuery& q,
                                       unsigned& seen) {
    const unsigned bit = parameter_bit(name);
    if (bit == 0) return invalid_request("query: unknown parameter (allowed: policy, rlqs, rule, by, n)");
    if ((seen & bit) != 0) return invalid_request(std::string(name) + ": given more than once");
    seen |= bit;
    if (bit == 2) return apply_by(value, q);
    if (bit == 4) {
        auto n = parse_n(value, k);
        if (!n) return n.error();
        q.n = *n;
        return std::nullopt;
    }
    if (value.empty()) return invalid_request(std::string(name) + ": must not be empty (leave it out for all)");
    (bit == 1 ? q.policy : bit == 8 ? q.rlqs : q.rule) = value;
    return std::nullopt;
}

/// The parameters that only go together: tenants of policies or buckets of rlqs, not both.
std::optional<Problem> check_combination(const TopQuery& q) {
    if (q.rlqs && q.policy) return invalid_request("rlqs: not with policy (buckets or tenants, one at a time)");
    if (q.rule && !q.rlqs) return invalid_request("rule: only with rlqs (the domain of the rule)");
    if (q.demand && !q.rlqs) return invalid_request("by: demand ranks rlqs buckets (give rlqs)");
    if (q.rlqs && q.by == service::TopBy::admitted) return invalid_request("by: buckets rank by denied or demand");
    return std::nullopt;
}

/// The answer's opening members: which ranking, over how long, how many kept.
void write_top_header(JsonWriter& w, std::string_view by, const service::TopOptions& options) {
    w.begin_object().key("by").string(by);
    w.key("window_seconds").number(std::chrono::duration_cast<std::chrono::seconds>(options.window).count());
    w.key("k").number(static_cast<std::int64_t>(options.k));
}

/// One ranking as an array of {name_key: name, count, error}: tenants of a policy, buckets of a rule.
void write_ranked(JsonWriter& w, std::string_view name_key, const std::vector<service::RankedTenant>& ranked) {
    w.begin_array();
    for (const auto& t : ranked) {
        w.begin_object().key(name_key).string(t.tenant);
        w.key("count").number(static_cast<std::int64_t>(t.count));
        w.key("error").number(static_cast<std::int64_t>(t.error)).end_object();
    }
    w.end_array();
}

PooledString top_json(const TopQuery& q, const service::TopOptions& options,
                      const std::vector<service::PolicyTop>& policies) {
    JsonWriter w(512);
    write_top_header(w, q.by == service::TopBy::denied ? "denied" : "admitted", options);
    w.key("policies").begin_array();
    for (const auto& p : policies) {
        w.begin_object().key("policy").string(p.policy).key("tenants");
        write_ranked(w, "tenant", p.tenants);
        w.end_object();
    }
    w.end_array().end_object();
    return w.take();
}

PooledString rlqs_top_json(const TopQuery& q, const service::TopOptions& options,
                           const std::vector<service::RuleTop>& rules) {
    JsonWriter w(512);
    write_top_header(w, q.demand ? "demand" : "denied", options);
    w.key("rlqs").begin_array();
    for (const auto& r : rules) {
        w.begin_object().key("domain").string(r.domain).key("rule").string(r.rule).key("buckets");
        write_ranked(w, "bucket", r.buckets);
        w.end_object();
    }
    w.end_array().end_object();
    return w.take();
}

/// Whether `q`'s domain (and rule, when named) is in the registry's rlqs:.
bool names_rlqs_rules(const policy::Registry* registry, const TopQuery& q) {
    if (registry == nullptr || registry->rlqs == nullptr) return false;
    const auto domain = registry->rlqs->domains.find(*q.rlqs);
    if (domain == registry->rlqs->domains.end()) return false;
    return !q.rule || std::any_of(domain->second.begin(), domain->second.end(),
                                  [&](const policy::RlqsRule& r) { return r.name == *q.rule; });
}

/// GET /v1/top?rlqs=: the buckets of a domain's rules (read under the board's lock, no await).
Answer rlqs_top(const Request& req, const policy::Registry* registry, service::TopBoard& board, const TopQuery& q) {
    if (!names_rlqs_rules(registry, q)) {
        return make_error_response(Problem{errc::unknown_policy, q.rule ? "rule: not a rule of that rlqs: domain"
                                                                          : "rlqs: not a domain of rlqs:"},
                                   req.version(), req.keep_alive());
    }
    auto rules = board.buckets().ranking(q.rlqs, q.rule, q.demand ? service::BucketBy::demand : service::BucketBy::denied,
                                         q.n);
    if (q.rule && rules.empty()) rules.push_back({*q.rlqs, *q.rule, {}});  // named: listed even when quiet
    return json_response(req, bhttp::status::ok, rlqs_top_json(q, board.options(), rules));
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
    if (auto problem = check_combination(q)) return *problem;
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
    if (q->rlqs) co_return rlqs_top(req, s.road.registry().get(), *board, *q);
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
