// Renders a verdict as X-RateLimit-*, IETF RateLimit / RateLimit-Policy and Retry-After.
#include "ratelimitd/http/rate_limit_headers.hpp"

#include <boost/beast/http/field.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string_view>

namespace ratelimitd::http {

namespace bhttp = boost::beast::http;  // <boost/beast/http/field.hpp>

namespace {

// RFC 9651 §3.3.1: an sf-integer has at most 15 digits. Negative values would be a store
// bug, but a header the client cannot parse is worse than a clamped one.
constexpr std::int64_t max_sf_integer = 999'999'999'999'999;

// Enough for any clamped value; also used for the single-valued X-RateLimit-* fields.
constexpr std::size_t int_buffer_size = 16;

std::int64_t clamp_sf(std::int64_t n) noexcept {
    return std::clamp<std::int64_t>(n, 0, max_sf_integer);
}

// Formats into `buf` (no locale, no allocation) and returns a view of it.
std::string_view format_int(std::int64_t n, char (&buf)[int_buffer_size]) noexcept {
    const auto r = std::to_chars(buf, buf + int_buffer_size, clamp_sf(n));
    return {buf, static_cast<std::size_t>(r.ptr - buf)};
}

void append_int(std::string& out, std::int64_t n) {
    char buf[int_buffer_size];
    out += format_int(n, buf);
}

// Policy names are restricted to [A-Za-z0-9._-] at config load, so normally nothing here
// changes. Still, an sf-string may hold only 0x20..0x7e with `"` and `\` escaped, and a raw
// CR/LF would split the header; anything else becomes '?' rather than a broken field.
void append_sf_string(std::string& out, std::string_view s) {
    out += '"';
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || u > 0x7e) {
            out += '?';
        } else {
            out += c;
        }
    }
    out += '"';
}

// Room for one member without the name: quotes, separators and two 15-digit parameters.
constexpr std::size_t member_overhead = 48;

std::size_t estimated_size(const check::Verdict& v) {
    std::size_t n = 0;
    for (const auto& w : v.windows) n += w.policy.size() + member_overhead;
    return n;
}

// Retry-After for a denied window: at least 1, so a client never retries at once.
std::int64_t retry_after_of(const check::WindowState& w) noexcept {
    return std::max<std::int64_t>(w.retry_after_s, 1);
}

// The reported window of a denied verdict. Compared by address so that the window behind
// Retry-After gets t = Retry-After even if the store's per-window flags disagree with it.
const check::WindowState* denied_reported(const check::Verdict& v) {
    if (v.allowed || v.windows.empty()) return nullptr;
    return &v.reported();
}

}  // namespace

namespace {

void append_rate_limit_policy_field(std::string& out, const check::Verdict& v) {
    const std::size_t start = out.size();
    for (const auto& w : v.windows) {
        if (out.size() != start) out += ", ";
        append_sf_string(out, w.policy);
        out += ";q=";
        append_int(out, w.limit);
        out += ";w=";
        // The draft requires w >= 1 (-11 §3.1.3); a zero window would make the item invalid.
        append_int(out, std::max<std::int64_t>(w.window_s, 1));
    }
}

void append_rate_limit_field(std::string& out, const check::Verdict& v) {
    const check::WindowState* reported_denied = denied_reported(v);
    const std::size_t start = out.size();
    for (const auto& w : v.windows) {
        if (out.size() != start) out += ", ";
        append_sf_string(out, w.policy);
        out += ";r=";
        append_int(out, w.remaining);
        out += ";t=";
        // -11 §6: Retry-After must not point earlier than t; sending the same number for a
        // denied window is the simplest way to keep that true.
        const bool denied = !w.allowed || &w == reported_denied;
        append_int(out, denied ? retry_after_of(w) : w.reset_after_s);
    }
}

// One buffer per thread for the two structured fields while they are set: a check answer
// then builds no string of its own for them (the fields copy the value anyway).
std::string& field_scratch(const check::Verdict& v) {
    static thread_local std::string scratch;
    scratch.clear();
    scratch.reserve(estimated_size(v));
    return scratch;
}

}  // namespace

std::string rate_limit_policy_field(const check::Verdict& v) {
    std::string out;
    out.reserve(estimated_size(v));
    append_rate_limit_policy_field(out, v);
    return out;
}

std::string rate_limit_field(const check::Verdict& v) {
    std::string out;
    out.reserve(estimated_size(v));
    append_rate_limit_field(out, v);
    return out;
}

namespace {

// Both field types (the answer's pooled fields, and Beast's default) get the same lines.
template <class FieldsT>
void set_headers(const check::Verdict& v, FieldsT& out) {
    if (v.windows.empty()) return;  // precondition broken: no numbers to show, so show none
    const check::WindowState& r = v.reported();
    char buf[int_buffer_size];
    out.set("X-RateLimit-Limit", format_int(r.limit, buf));
    out.set("X-RateLimit-Remaining", format_int(r.remaining, buf));
    out.set("X-RateLimit-Reset", format_int(r.reset_epoch_s, buf));
    std::string& scratch = field_scratch(v);
    append_rate_limit_policy_field(scratch, v);
    out.set("RateLimit-Policy", scratch);
    scratch.clear();
    append_rate_limit_field(scratch, v);
    out.set("RateLimit", scratch);
    if (const std::string* lease = v.lease()) out.set("X-RateLimit-Lease", *lease);
    if (!v.allowed) {
        out.set(bhttp::field::retry_after, format_int(retry_after_of(r), buf));
        out.set(bhttp::field::cache_control, "no-store");
    }
}

}  // namespace

void set_rate_limit_headers(const check::Verdict& v, bhttp::fields& out) { set_headers(v, out); }

void set_rate_limit_headers(const check::Verdict& v, Fields& out) { set_headers(v, out); }

}  // namespace ratelimitd::http
