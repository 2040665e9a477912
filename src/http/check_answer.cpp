// /v1/check on the wire, outbound: JSON answers and status codes (requests: check_codec.cpp).
#include "ratelimitd/http/check_codec.hpp"

#include "ratelimitd/headers/rate_limit_fields.hpp"
#include "ratelimitd/http/check_answer_body.hpp"
#include "ratelimitd/http/json_response.hpp"
#include "ratelimitd/http/json_writer.hpp"
#include "ratelimitd/http/rate_limit_headers.hpp"
#include "ratelimitd/policy/policy.hpp"

#include <boost/beast/http/field.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace ratelimitd::http {

namespace {

using ordered_json = nlohmann::ordered_json;

// The headers' numbers (headers/rate_limit_fields.hpp), so body and headers never disagree.
using headers::shown_count;

// Retry-After of one window: 0 when it admitted, the headers' value when it denied.
std::int64_t retry_after_in_body(const check::WindowState& w, bool denied) noexcept {
    return denied ? headers::retry_after_of(w) : 0;
}

Response make_json_response(bhttp::status status, const ordered_json& body, unsigned version,
                            bool keep_alive) {
    // replace: a detail or a tenant with invalid UTF-8 must not make dump() throw.
    return json_response(status, body.dump(-1, ' ', false, ordered_json::error_handler_t::replace),
                              version, keep_alive);
}

// Opens the answer object with the fields every check answer starts with.
void write_identity(JsonWriter& w, const service::Decision& d, bool allowed, std::string_view policy) {
    w.begin_object();
    w.key("allowed").boolean(allowed);
    w.key("policy").string(policy);
    w.key("tenant").string(d.tenant);
    w.key("scope").string(d.scope);
}

// A fail-closed policy says so in every answer, so a client that cannot reach ratelimitd
// denies too instead of admitting by its own default (clients/php/README.md). Fail-open
// policies, the default, add nothing: the client's own default stands for them.
void write_failure_mode(JsonWriter& w, const service::Decision& d) {
    if (d.fail_closed) w.key("on_store_error").string("deny");
}

RenderedAnswer make_degraded_answer(const service::Decision& d, unsigned version, bool keep_alive) {
    const bool allowed = d.verdict.allowed;
    JsonWriter w;
    write_identity(w, d, allowed, d.policy);
    // The store did not answer: no number is known.
    w.key("limit").null();
    w.key("remaining").null();
    w.key("reset").null();
    if (allowed) {
        w.key("retry_after").null();
    } else {
        w.key("retry_after").number(1);  // matches the Retry-After header below
    }
    w.key("degraded").boolean(true);
    write_failure_mode(w, d);
    w.end_object();
    const auto status = allowed ? bhttp::status::ok : bhttp::status::service_unavailable;
    RenderedAnswer res = json_answer(status, w.take(), version, keep_alive);
    res.add_field("X-RateLimit-Degraded", to_string(d.store_error));
    if (!allowed) res.add_field("Retry-After", "1");
    return res;
}

// A decided check's status and header lines around its written body.
RenderedAnswer check_answer_framed(const service::Decision& d, const headers::ShownCounts& shown, PooledString body,
                                   unsigned version, bool keep_alive) {
    const check::Verdict& v = d.verdict;
    RenderedAnswer res =
        json_answer(v.allowed ? bhttp::status::ok : bhttp::status::too_many_requests, std::move(body), version, keep_alive);
    set_rate_limit_headers(v, shown, res);
    if (const std::int64_t delay_ms = v.delay_ms(); delay_ms > 0) {
        res.add_field("X-RateLimit-Delay-Ms", std::to_string(delay_ms));
    }
    if (d.shadow_denied) res.add_field("X-RateLimit-Shadow", "deny");
    return res;
}

}  // namespace

bhttp::status status_for(errc code) noexcept {
    switch (code) {
    case errc::invalid_request:
    case errc::unknown_policy:
    case errc::unknown_plan:
    case errc::invalid_cost: return bhttp::status::bad_request;
    case errc::payload_too_large: return bhttp::status::payload_too_large;
    case errc::header_too_large: return bhttp::status::request_header_fields_too_large;
    case errc::config_pending: return bhttp::status::service_unavailable;
    case errc::not_found: return bhttp::status::not_found;
    case errc::method_not_allowed: return bhttp::status::method_not_allowed;
    case errc::too_many_connections: return bhttp::status::service_unavailable;
    default: return bhttp::status::internal_server_error;  // not a client error: a bug
    }
}

Response make_error_response(const Problem& p, unsigned version, bool keep_alive) {
    ordered_json body = ordered_json::object();
    body["error"] = to_string(p.code);
    body["detail"] = p.detail;
    return make_json_response(status_for(p.code), body, version, keep_alive);
}

Response make_check_response(const service::Decision& d, unsigned version, bool keep_alive) {
    return make_check_answer(d, version, keep_alive).to_response();
}

Answer make_check_answer(const service::Decision& d, unsigned version, bool keep_alive) {
    if (!d.limited) {
        JsonWriter w;
        write_identity(w, d, true, policy::no_policy);
        w.end_object();
        return json_answer(bhttp::status::ok, w.take(), version, keep_alive);
    }
    if (d.degraded) return make_degraded_answer(d, version, keep_alive);

    const check::Verdict& v = d.verdict;
    if (v.windows.empty()) {
        // A store that decided must report at least one window; without one there are no
        // numbers to render, so say so instead of inventing them.
        return make_error_response(
            Problem{errc::bad_script_reply, "verdict: the store reported no window"}, version,
            keep_alive);
    }

    // The reported window's numbers, formatted once for the body and the header lines.
    const headers::ShownCounts shown(v);
    PooledString body;
    if (write_one_window_check_body(d, shown, body)) {
        return check_answer_framed(d, shown, std::move(body), version, keep_alive);
    }

    const check::WindowState& r = v.reported();
    JsonWriter w;
    write_identity(w, d, v.allowed, d.policy);
    w.key("limit").number(shown_count(r.limit));
    w.key("remaining").number(shown_count(r.remaining));
    w.key("reset").number(shown_count(r.reset_epoch_s));
    w.key("retry_after").number(retry_after_in_body(r, !v.allowed));
    // max_delay: admitted, its reservation charged; the caller waits this long, then goes ahead.
    const std::int64_t delay_ms = v.delay_ms();
    if (delay_ms > 0) w.key("delay_ms").number(delay_ms);
    if (v.windows.size() > 1) {
        w.key("windows").begin_array();
        for (const auto& win : v.windows) {
            w.begin_object();
            w.key("policy").string(win.policy);
            w.key("limit").number(shown_count(win.limit));
            w.key("window").number(shown_count(win.window_s));
            w.key("remaining").number(shown_count(win.remaining));
            w.key("reset").number(shown_count(win.reset_epoch_s));
            // Same rule as the RateLimit field: the reported window of a deny is denied.
            w.key("retry_after").number(retry_after_in_body(win, !win.allowed || (!v.allowed && &win == &r)));
            w.end_object();
        }
        w.end_array();
    }
    // A shadow policy would have denied: allowed anyway, and the caller may want to know.
    if (d.shadow_denied) w.key("shadow_denied").boolean(true);
    if (const std::string* lease = v.lease()) w.key("lease").string(*lease);
    write_failure_mode(w, d);
    w.end_object();

    return check_answer_framed(d, shown, w.take(), version, keep_alive);
}

}  // namespace ratelimitd::http
