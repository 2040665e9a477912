// /v1/envoy/peek and /v1/envoy/reset: one descriptor planned as a ShouldRateLimit call of its
// own would plan it (same rule, same key), then the store's peek or reset of that key.
#include "ratelimitd/http/envoy_admin_endpoints.hpp"

#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/core/percent.hpp"
#include "ratelimitd/core/query_string.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/http/state_response.hpp"
#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/rls_plan.hpp"

#include <nlohmann/json.hpp>
#include <openssl/sha.h>
#include <spdlog/spdlog.h>

namespace ratelimitd::http {

namespace net = boost::asio;
using json = nlohmann::ordered_json;

namespace {

std::string_view query_of(const Request& req) {
    const std::string_view target = req.target();
    const auto q = target.find('?');
    return q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
}

/// The one-descriptor plan the request names; `domain` is set to the domain it names.
result<policy::RlsPlan> target_plan(const Request& req, service::CheckService& service, std::string& domain) {
    auto parsed = parse_envoy_state_query(query_of(req));
    if (!parsed) return parsed.error();
    domain = parsed->domain;
    auto registry = service.registry();
    // A call to an unknown domain is answered OK (as envoyproxy/ratelimit does); an operator
    // naming one here made a typo, and is told so.
    if (!parsed->domain.empty() && (!registry->domains || registry->domains->find(parsed->domain) == nullptr)) {
        return Problem{errc::invalid_request, "domain: " + quote(parsed->domain) + " is not a configured domain"};
    }
    return policy::plan(std::move(registry), *parsed);
}

// The counter key named in the audit trail without its descriptor values.
std::string key_hash(std::string_view key) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
    return to_hex(std::span<const unsigned char>(digest, 8));
}

json described(const policy::RlsPlan& p, std::string_view domain) {
    const auto& d = p.descriptors.front();
    return {{"domain", domain}, {"rule", d.label}, {"limited", d.kind == policy::RlsDescriptorPlan::Kind::limited}};
}

}  // namespace

result<policy::RlsRequest> parse_envoy_state_query(std::string_view query) {
    policy::RlsRequest req;
    req.descriptors.emplace_back();
    bool have_domain = false;
    const PercentOptions form{.plus_is_space = true, .malformed = MalformedPercent::reject};
    while (const auto item = next_query_item(query)) {
        auto name = percent_decode(item->name, form);
        auto value = percent_decode(item->value, form);
        if (!name || !value) return Problem{errc::invalid_request, "query: a '%' without two hex digits"};
        if (!have_domain && *name == "domain") {
            req.domain = std::move(*value);
            have_domain = true;
        } else {
            req.descriptors.front().entries.push_back(policy::RlsEntry{std::move(*name), std::move(*value)});
        }
    }
    return req;
}

net::awaitable<Response> answer_envoy_peek(const Request& req, service::CheckService& service) {
    std::string domain;
    auto p = target_plan(req, service, domain);
    if (!p) co_return make_error_response(p.error(), req.version(), req.keep_alive());
    json body = described(*p, domain);
    const auto& d = p->descriptors.front();
    if (d.kind != policy::RlsDescriptorPlan::Kind::limited) co_return state_json_response(req, bhttp::status::ok, body);
    const auto& w = p->check.limits[d.limit].windows.front();
    auto verdict = co_await service.store().peek(*w.limit, w.key);
    if (!verdict) co_return state_error_response(req, verdict.error());
    const auto& state = verdict->reported();
    body["limit"] = d.requests_per_unit;
    body["unit"] = policy::to_string(d.unit);
    body["remaining"] = state.remaining;
    // An aligned window ends at its unit boundary, whatever the store's own clock of the key says.
    body["reset"] = d.window_end_s != 0 ? d.window_end_s : state.reset_epoch_s;
    co_return state_json_response(req, bhttp::status::ok, body);
}

net::awaitable<Response> answer_envoy_reset(const Request& req, service::CheckService& service,
                                            EnvoyResetRecord* record) {
    EnvoyResetRecord ignored;
    EnvoyResetRecord& out = record != nullptr ? *record : ignored;
    if (auto asked = parse_envoy_state_query(query_of(req))) {
        out.domain = asked->domain;
        for (const auto& entry : asked->descriptors.front().entries) out.entry_keys.push_back(entry.key);
    }
    std::string domain;
    auto p = target_plan(req, service, domain);
    if (!p) {
        out.outcome = std::string(to_string(p.error().code));
        co_return make_error_response(p.error(), req.version(), req.keep_alive());
    }
    json body = described(*p, domain);
    const auto& d = p->descriptors.front();
    out.rule = d.label;
    if (d.kind != policy::RlsDescriptorPlan::Kind::limited) {
        out.outcome = "not_limited";
        body["reset"] = false;
        co_return state_json_response(req, bhttp::status::ok, body);
    }
    const auto& w = p->check.limits[d.limit].windows.front();
    out.key_hash = key_hash(w.key);
    spdlog::info("admin reset envoy rule={}", d.label);
    auto removed = co_await service.store().reset(w.key);
    if (!removed) {
        out.outcome = std::string(to_string(removed.error().code));
        co_return state_error_response(req, removed.error());
    }
    out.outcome = *removed ? "reset" : "nothing_to_reset";
    body["reset"] = *removed;
    co_return state_json_response(req, bhttp::status::ok, body);
}

}  // namespace ratelimitd::http
