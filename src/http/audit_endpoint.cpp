// GET /v1/audit: the query (since, limit) and the answer built from the kept lines as written.
#include "ratelimitd/http/audit_endpoint.hpp"

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/core/percent.hpp"
#include "ratelimitd/core/query_string.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>

namespace ratelimitd::http {

namespace {


Problem bad_since(std::string_view text) {
    return invalid_request("since: expected an RFC 3339 time such as 2026-12-02T13:20:00Z, or epoch seconds, got " +
               quote(text));
}

// `n` digits at `at` as a number, or -1.
int digits(std::string_view text, std::size_t at, std::size_t n) {
    if (at + n > text.size()) return -1;
    int value = 0;
    for (std::size_t i = at; i < at + n; ++i) {
        if (text[i] < '0' || text[i] > '9') return -1;
        value = value * 10 + (text[i] - '0');
    }
    return value;
}

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
    static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : days[m - 1];
}

// YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), in epoch milliseconds.
std::optional<std::int64_t> rfc3339_ms(std::string_view t) {
    const int y = digits(t, 0, 4), mo = digits(t, 5, 2), d = digits(t, 8, 2);
    const int h = digits(t, 11, 2), mi = digits(t, 14, 2), s = digits(t, 17, 2);
    if (t.size() < 20 || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != 't') || t[13] != ':' ||
        t[16] != ':') {
        return std::nullopt;
    }
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60) {
        return std::nullopt;
    }
    if (d > days_in_month(y, mo)) return std::nullopt;
    std::size_t at = 19;
    std::int64_t ms = 0;
    if (t[at] == '.') {
        std::size_t n = 0;
        for (++at; at < t.size() && t[at] >= '0' && t[at] <= '9'; ++at, ++n) {
            if (n < 3) ms = ms * 10 + (t[at] - '0');
        }
        if (n == 0) return std::nullopt;
        for (; n < 3; ++n) ms *= 10;
    }
    std::int64_t offset_s = 0;
    const std::string_view zone = t.substr(std::min(at, t.size()));
    if (zone == "Z" || zone == "z") {
        offset_s = 0;
    } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
        const int oh = digits(zone, 1, 2), om = digits(zone, 4, 2);
        if (oh < 0 || oh > 23 || om < 0 || om > 59) return std::nullopt;
        offset_s = (zone[0] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    } else {
        return std::nullopt;
    }
    const std::int64_t seconds = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 +
                                 h * 3600 + mi * 60 + std::min(s, 59) - offset_s;
    return seconds * 1000 + ms;
}

// Whole epoch seconds, with up to three decimals.
std::optional<std::int64_t> epoch_ms(std::string_view t) {
    const auto dot = t.find('.');
    const std::string_view whole = t.substr(0, dot);
    if (whole.empty() || whole.size() > 12) return std::nullopt;
    std::int64_t seconds = 0;
    const auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), seconds);
    if (ec != std::errc() || end != whole.data() + whole.size() || seconds < 0) return std::nullopt;
    std::int64_t ms = 0;
    if (dot != std::string_view::npos) {
        const std::string_view fraction = t.substr(dot + 1);
        if (fraction.empty() || fraction.size() > 3) return std::nullopt;
        for (std::size_t i = 0; i < 3; ++i) {
            const char c = i < fraction.size() ? fraction[i] : '0';
            if (c < '0' || c > '9') return std::nullopt;
            ms = ms * 10 + (c - '0');
        }
    }
    return seconds * 1000 + ms;
}

}  // namespace

result<std::int64_t> parse_audit_since(std::string_view text) {
    if (auto ms = text.find('-') != std::string_view::npos ? rfc3339_ms(text) : epoch_ms(text)) return *ms;
    return bad_since(text);
}

result<AuditQuery> parse_audit_query(std::string_view query) {
    AuditQuery out;
    bool have_since = false, have_limit = false;
    while (const auto item = next_query_item(query)) {
        const std::string_view name = item->name;
        auto value = percent_decode(item->value);
        if (!value) return invalid_request(std::string(name == "limit" ? "limit" : "since") + ": a '%' without two hex digits");
        if (name == "since") {
            if (have_since) return invalid_request("since: given more than once");
            have_since = true;
            auto since = parse_audit_since(*value);
            if (!since) return since.error();
            out.since_epoch_ms = *since;
        } else if (name == "limit") {
            if (have_limit) return invalid_request("limit: given more than once");
            have_limit = true;
            std::size_t n = 0;
            const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
            if (ec != std::errc() || end != value->data() + value->size() || n < 1 || n > audit_max_limit) {
                return invalid_request("limit: expected an integer 1.." + std::to_string(audit_max_limit) + ", got " +
                           quote(*value));
            }
            out.limit = n;
        } else {
            return invalid_request("query: " + quote(name) + " is not a parameter of /v1/audit (since, limit)");
        }
    }
    return out;
}

Response answer_audit(const Request& req, const audit::AuditTrail& trail) {
    const std::string_view target = req.target();
    const auto q = target.find('?');
    auto query = parse_audit_query(q == std::string_view::npos ? std::string_view{} : target.substr(q + 1));
    if (!query) return make_error_response(query.error(), req.version(), req.keep_alive());
    const auto page = trail.since(query->since_epoch_ms, query->limit);
    // The lines are JSON as written to the log: joined, not parsed again.
    std::string body = "{\"entries\":[";
    for (std::size_t i = 0; i < page.entries.size(); ++i) {
        if (i != 0) body += ',';
        body += page.entries[i].line;
    }
    body += "],\"more\":";
    body += page.more ? "true" : "false";
    body += ",\"kept\":" + std::to_string(page.kept) + ",\"capacity\":" + std::to_string(trail.capacity()) + "}";
    return json_response(req, bhttp::status::ok, body);
}

namespace handlers {

boost::asio::awaitable<Answer> audit(EndpointServices& s, const EndpointCall& call) {
    if (s.options.audit == nullptr) {
        co_return make_error_response(Problem{errc::not_found, "path: /v1/audit: no audit trail in this process"},
                                      call.req.version(), call.req.keep_alive());
    }
    co_return answer_audit(call.req, *s.options.audit);
}

}  // namespace handlers

}  // namespace ratelimitd::http
