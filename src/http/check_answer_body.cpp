// The common check answer's body in one pass (check_answer_body.hpp).
#include "ratelimitd/http/check_answer_body.hpp"

#include "ratelimitd/core/byte_table.hpp"
#include "ratelimitd/headers/rate_limit_fields.hpp"

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ratelimitd::http {

namespace {

// The longest text the three strings may add up to here; longer ones (rare: a tenant is at
// most 128 bytes) take the JsonWriter path, so the buffer below has a fixed bound.
constexpr std::size_t max_text = 320;
// Keys, punctuation and up to five numbers of at most 20 characters each.
constexpr std::size_t max_rest = 320;

// The bytes JsonWriter copies as they are between its quotes: printable ASCII and DEL, but
// the quote and the backslash (no control byte, nothing of 0x80 and above).
constexpr auto plain_bytes = byte_table([](unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; });

// True when JsonWriter would copy `s` as it is between its quotes; one look-up a byte.
bool plain(std::string_view s) noexcept {
    for (const char c : s) {
        if (!plain_bytes[static_cast<unsigned char>(c)]) return false;
    }
    return true;
}

// Appends to a buffer sized for the whole body beforehand: no capacity check per piece.
class BodyWriter {
public:
    explicit BodyWriter(char* at) noexcept : at_(at) {}
    template <std::size_t N>
    void put(const char (&text)[N]) noexcept {
        put(std::string_view(text, N - 1));
    }
    void put(std::string_view s) noexcept {
        std::memcpy(at_, s.data(), s.size());
        at_ += s.size();
    }
    void quoted(std::string_view s) noexcept {
        *at_++ = '"';
        put(s);
        *at_++ = '"';
    }
    void number(std::int64_t n) noexcept { at_ = std::to_chars(at_, at_ + 24, n).ptr; }
    [[nodiscard]] char* at() const noexcept { return at_; }

private:
    char* at_;
};

}  // namespace

bool write_one_window_check_body(const service::Decision& d, const headers::ShownCounts& shown, PooledString& out) {
    const check::Verdict& v = d.verdict;
    if (v.windows.size() != 1 || v.lease() != nullptr) return false;
    const std::string_view tenant = d.tenant;
    if (d.policy.size() + tenant.size() + d.scope.size() > max_text) return false;
    if (!plain(d.policy) || !plain(tenant) || !plain(d.scope)) return false;

    char buffer[max_text + max_rest];
    BodyWriter w(buffer);
    w.put(v.allowed ? R"({"allowed":true,"policy":)" : R"({"allowed":false,"policy":)");
    w.quoted(d.policy);
    w.put(R"(,"tenant":)");
    w.quoted(tenant);
    w.put(R"(,"scope":)");
    w.quoted(d.scope);
    w.put(R"(,"limit":)");
    w.put(shown.limit());
    w.put(R"(,"remaining":)");
    w.put(shown.remaining());
    w.put(R"(,"reset":)");
    w.put(shown.reset());
    w.put(R"(,"retry_after":)");
    // As the JsonWriter path: 0 when it admitted, the Retry-After header's value when it denied.
    w.put(shown.retry_after());
    if (const std::int64_t delay_ms = v.delay_ms(); delay_ms > 0) {
        w.put(R"(,"delay_ms":)");
        w.number(delay_ms);
    }
    if (d.shadow_denied) w.put(R"(,"shadow_denied":true)");
    if (d.fail_closed) w.put(R"(,"on_store_error":"deny")");
    w.put("}");
    out.assign(buffer, static_cast<std::size_t>(w.at() - buffer));
    return true;
}

}  // namespace ratelimitd::http
