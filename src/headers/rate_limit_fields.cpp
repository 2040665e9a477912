// A verdict's rate-limit header values, transport-neutral (rate_limit_fields.hpp).
#include "ratelimitd/headers/rate_limit_fields.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

namespace ratelimitd::headers {

namespace {

// Enough for any clamped value; also used for the single-valued X-RateLimit-* fields.
constexpr std::size_t int_buffer_size = 16;

// Formats into `buf` (no locale, no allocation) and returns a view of it.
std::string_view format_int(std::int64_t n, char (&buf)[int_buffer_size]) noexcept {
    const auto r = std::to_chars(buf, buf + int_buffer_size, shown_count(n));
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

// A window's parts that depend only on its policy (name, limit, length), rendered once: the
// RateLimit-Policy member (`"name";q=L;w=W`) and the quoted name that opens its RateLimit
// member. Formatted on every check before, though constant per policy.
struct RenderedPolicy {
    std::string name;
    std::int64_t limit = -1;
    std::int64_t window_s = -1;
    std::string quoted;  ///< "name", as an sf-string
    std::string member;  ///< the whole RateLimit-Policy member
};

// The policies this thread rendered last. A check names one or a few policies, and a process
// holds as many as its config: a handful of entries keep the hit rate near 1 and the search
// short; a miss (a new policy, or one evicted) renders it again, which is all it costs.
const RenderedPolicy& rendered_policy(const check::WindowState& w) {
    constexpr std::size_t slots = 8;
    static thread_local std::array<RenderedPolicy, slots> memo;
    static thread_local std::size_t next = 0;
    for (const RenderedPolicy& e : memo) {
        if (e.limit == w.limit && e.window_s == w.window_s && e.name == w.policy) return e;
    }
    RenderedPolicy& e = memo[next++ % slots];
    e.name = w.policy;
    e.limit = w.limit;
    e.window_s = w.window_s;
    e.quoted.clear();
    append_sf_string(e.quoted, w.policy);
    e.member = e.quoted;
    e.member += ";q=";
    append_int(e.member, w.limit);
    e.member += ";w=";
    // The draft requires w >= 1 (-11 §3.1.3); a zero window would make the item invalid.
    append_int(e.member, std::max<std::int64_t>(w.window_s, 1));
    return e;
}

// Room for one member without the name: quotes, separators and two 15-digit parameters.
constexpr std::size_t member_overhead = 48;

std::size_t estimated_size(const check::Verdict& v) {
    std::size_t n = 0;
    for (const auto& w : v.windows) n += w.policy.size() + member_overhead;
    return n;
}

// The reported window of a denied verdict. Compared by address so that the window behind
// Retry-After gets t = Retry-After even if the store's per-window flags disagree with it.
const check::WindowState* denied_reported(const check::Verdict& v) {
    if (v.allowed || v.windows.empty()) return nullptr;
    return &v.reported();
}

void append_rate_limit_policy_field(std::string& out, const check::Verdict& v) {
    const std::size_t start = out.size();
    for (const auto& w : v.windows) {
        if (out.size() != start) out += ", ";
        out += rendered_policy(w).member;
    }
}

void append_rate_limit_field(std::string& out, const check::Verdict& v) {
    const check::WindowState* reported_denied = denied_reported(v);
    const std::size_t start = out.size();
    for (const auto& w : v.windows) {
        if (out.size() != start) out += ", ";
        out += rendered_policy(w).quoted;
        out += ";r=";
        append_int(out, w.remaining);
        out += ";t=";
        // -11 §6: Retry-After must not point earlier than t; sending the same number for a
        // denied window is the simplest way to keep that true.
        const bool denied = !w.allowed || &w == reported_denied;
        append_int(out, denied ? retry_after_of(w) : w.reset_after_s);
    }
}

// One buffer per thread for the two structured fields while they are set: an answer then
// builds no string of its own for them (the transport copies the value anyway).
std::string& field_scratch(const check::Verdict& v) {
    static thread_local std::string scratch;
    scratch.clear();
    scratch.reserve(estimated_size(v));
    return scratch;
}

constexpr std::array<std::string_view, 8> header_names{
    "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy",
    "RateLimit",         "X-RateLimit-Lease",     "Retry-After",       "Cache-Control",
};

void set_one(const check::Verdict& v, RateLimitHeader h, HeaderSink& out) {
    const check::WindowState& r = v.reported();
    const std::string_view name = header_name(h);
    char buf[int_buffer_size];
    switch (h) {
    case RateLimitHeader::x_limit: return out.set(name, format_int(r.limit, buf));
    case RateLimitHeader::x_remaining: return out.set(name, format_int(r.remaining, buf));
    case RateLimitHeader::x_reset: return out.set(name, format_int(r.reset_epoch_s, buf));
    case RateLimitHeader::policy: {
        std::string& scratch = field_scratch(v);
        append_rate_limit_policy_field(scratch, v);
        return out.set(name, scratch);
    }
    case RateLimitHeader::rate_limit: {
        std::string& scratch = field_scratch(v);
        append_rate_limit_field(scratch, v);
        return out.set(name, scratch);
    }
    case RateLimitHeader::lease:
        if (const std::string* lease = v.lease()) out.set(name, *lease);
        return;
    case RateLimitHeader::retry_after:
        if (!v.allowed) out.set(name, format_int(retry_after_of(r), buf));
        return;
    case RateLimitHeader::no_store:
        if (!v.allowed) out.set(name, "no-store");
        return;
    }
}

// Writes field lines into a buffer sized for them beforehand (field_lines_bound): a copy or a
// number per piece, no capacity check and no string call per append.
class LineWriter {
public:
    explicit LineWriter(char* at) noexcept : at_(at) {}
    void put(std::string_view s) noexcept {
        std::memcpy(at_, s.data(), s.size());
        at_ += s.size();
    }
    void number(std::int64_t n) noexcept { at_ = std::to_chars(at_, at_ + int_buffer_size, shown_count(n)).ptr; }
    void line(RateLimitHeader h, std::string_view text) noexcept {
        open(h);
        put(text);
        put("\r\n");
    }
    void open(RateLimitHeader h) noexcept {
        put(header_names[static_cast<std::size_t>(h)]);
        put(": ");
    }
    [[nodiscard]] char* at() const noexcept { return at_; }

private:
    char* at_;
};

// At least the bytes field_lines writes: every name with its separators and a number, and per
// window the policy's quoted name twice (at most two bytes a character, escapes included),
// its parameters and a joining ", ".
std::size_t field_lines_bound(const check::Verdict& v) {
    constexpr std::size_t per_line = 32 + int_buffer_size;  // longest name 21, ": ", CRLF
    constexpr std::size_t per_window = 2 * (2 + 2) + 4 * (3 + int_buffer_size) + 4;
    std::size_t n = header_names.size() * per_line;
    for (const auto& w : v.windows) n += 4 * w.policy.size() + per_window;
    if (const std::string* lease = v.lease()) n += lease->size();
    return n;
}

// The RateLimit line: the reported window's numbers from `shown`, the others' formatted here.
void write_rate_limit_line(const check::Verdict& v, const ShownCounts& shown, LineWriter& out) {
    const check::WindowState& r = v.reported();
    const check::WindowState* reported_denied = denied_reported(v);
    out.open(RateLimitHeader::rate_limit);
    for (std::size_t i = 0; i < v.windows.size(); ++i) {
        const check::WindowState& w = v.windows[i];
        if (i > 0) out.put(", ");
        out.put(rendered_policy(w).quoted);
        out.put(";r=");
        if (&w == &r) {
            out.put(shown.remaining());
            out.put(";t=");
            out.put(shown.t());
            continue;
        }
        out.number(w.remaining);
        out.put(";t=");
        // As append_rate_limit_field: a denied window's t is its Retry-After.
        const bool denied = !w.allowed || &w == reported_denied;
        out.number(denied ? retry_after_of(w) : w.reset_after_s);
    }
    out.put("\r\n");
}

void write_line(const check::Verdict& v, const ShownCounts& shown, RateLimitHeader h, LineWriter& out) {
    switch (h) {
    case RateLimitHeader::x_limit: return out.line(h, shown.limit());
    case RateLimitHeader::x_remaining: return out.line(h, shown.remaining());
    case RateLimitHeader::x_reset: return out.line(h, shown.reset());
    case RateLimitHeader::policy:
        out.open(h);
        for (std::size_t i = 0; i < v.windows.size(); ++i) {
            if (i > 0) out.put(", ");
            out.put(rendered_policy(v.windows[i]).member);
        }
        return out.put("\r\n");
    case RateLimitHeader::rate_limit: return write_rate_limit_line(v, shown, out);
    case RateLimitHeader::lease:
        if (const std::string* lease = v.lease()) {
            out.open(h);
            out.put(*lease);
            out.put("\r\n");
        }
        return;
    case RateLimitHeader::retry_after:
        if (!v.allowed) out.line(h, shown.retry_after());
        return;
    case RateLimitHeader::no_store:
        if (!v.allowed) out.line(h, "no-store");
        return;
    }
}

}  // namespace

std::string_view http_field_lines(const check::Verdict& v, std::span<const RateLimitHeader> which) {
    if (v.windows.empty()) return {};
    return http_field_lines(v, which, ShownCounts(v));
}

std::string_view http_field_lines(const check::Verdict& v, std::span<const RateLimitHeader> which,
                                  const ShownCounts& shown) {
    if (v.windows.empty()) return {};
    static thread_local std::string buffer;
    const std::size_t bound = field_lines_bound(v);
    if (buffer.size() < bound) buffer.resize(bound);
    LineWriter out(buffer.data());
    for (const RateLimitHeader h : which) write_line(v, shown, h, out);
    return {buffer.data(), static_cast<std::size_t>(out.at() - buffer.data())};
}

std::int64_t shown_count(std::int64_t n) noexcept {
    return std::clamp<std::int64_t>(n, 0, max_shown_count);
}

std::int64_t retry_after_of(const check::WindowState& w) noexcept {
    return std::clamp<std::int64_t>(w.retry_after_s, 1, max_shown_count);
}

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

std::string_view header_name(RateLimitHeader h) noexcept {
    return header_names[static_cast<std::size_t>(h)];
}

void set_rate_limit_headers(const check::Verdict& v, std::span<const RateLimitHeader> which, HeaderSink& out) {
    if (v.windows.empty()) return;  // no numbers to show, so show none
    for (const RateLimitHeader h : which) set_one(v, h, out);
}

}  // namespace ratelimitd::headers
