// POST /v1/release: reads the lease, frees it through the service, renders the state after.
#include "ratelimitd/http/release_endpoint.hpp"

#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/http/json_writer.hpp"
#include "ratelimitd/http/rate_limit_headers.hpp"
#include "ratelimitd/http/state_response.hpp"
#include "ratelimitd/store/lease_id.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace ratelimitd::http {

namespace net = boost::asio;

namespace {

// The "lease" field, when the body is a JSON object holding a well-formed one. The raw text
// is never echoed: a lease is a capability, and a wrong one is somebody's guess.
result<std::string> lease_of(std::string_view body) {
    const auto doc = nlohmann::json::parse(body, nullptr, false);
    const Problem missing{errc::invalid_request,
                          "lease: expected the 32 lower-case hex digits of the lease a check returned"};
    if (!doc.is_object()) return missing;
    const auto it = doc.find("lease");
    if (it == doc.end() || !it->is_string()) return missing;
    std::string lease = it->get<std::string>();
    if (!store::is_lease_id(lease)) return missing;
    return lease;
}

Response rendered(const Request& req, const service::Decision& d, const std::string& lease) {
    const check::WindowState& s = d.verdict.windows.front();
    JsonWriter w;
    w.begin_object();
    w.key("released").boolean(d.verdict.allowed);
    w.key("policy").string(d.policy);
    w.key("tenant").string(d.tenant);
    w.key("scope").string(d.scope);
    w.key("lease").string(lease);
    w.key("limit").number(s.limit);
    w.key("remaining").number(s.remaining);
    w.key("reset").number(s.reset_epoch_s);
    w.key("reset_after").number(s.reset_after_s);
    w.end_object();
    Response res = json_response(req, bhttp::status::ok, w.take());
    // The headers of the state after the release; nothing was denied, so no Retry-After.
    check::Verdict state = d.verdict;
    state.allowed = state.windows.front().allowed = true;
    set_rate_limit_headers(state, res);
    return res;
}

}  // namespace

net::awaitable<Response> answer_release(const Request& req, service::CheckService& service) {
    auto lease = lease_of(req.body());
    if (!lease) co_return make_error_response(lease.error(), req.version(), req.keep_alive());
    auto parsed = parse_check_json(req.body());
    if (!parsed) co_return make_error_response(parsed.error(), req.version(), req.keep_alive());
    auto d = co_await service.release(std::move(*parsed), *lease);
    if (!d) co_return state_error_response(req, d.error());  // unknown, not wrong: retry later
    if (d->verdict.windows.empty()) {
        co_return make_error_response(Problem{errc::bad_script_reply, "release: the store reported no state"},
                                      req.version(), req.keep_alive());
    }
    co_return rendered(req, *d, *lease);
}

}  // namespace ratelimitd::http
