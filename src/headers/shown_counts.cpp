// ShownCounts: the reported window's numbers formatted once (shown_counts.hpp).
#include "ratelimitd/headers/shown_counts.hpp"

#include "ratelimitd/headers/rate_limit_fields.hpp"

#include <array>
#include <algorithm>
#include <cstring>

namespace ratelimitd::headers {

namespace {

// "00" to "99": two digits a step, from the end (std::to_chars measures the length first, a
// loop of its own: a check's four numbers cost about 180 instructions more that way).
constexpr std::array<char, 200> digit_pairs = [] {
    std::array<char, 200> t{};
    for (unsigned i = 0; i < 100; ++i) {
        t[2 * i] = static_cast<char>('0' + i / 10);
        t[2 * i + 1] = static_cast<char>('0' + i % 10);
    }
    return t;
}();

}  // namespace

ShownCounts::ShownCounts(const check::Verdict& v) noexcept {
    const check::WindowState& r = v.reported();
    format(limit_, shown_count(r.limit));
    format(remaining_, shown_count(r.remaining));
    format(reset_, shown_count(r.reset_epoch_s));
    if (v.allowed) {
        retry_after_.digits.back() = '0';
        retry_after_.start = static_cast<unsigned char>(retry_after_.digits.size() - 1);
    } else {
        format(retry_after_, retry_after_of(r));
    }
    // As the RateLimit field's rule: the reported window of a deny is denied.
    if (!v.allowed) {
        t_ = retry_after_;
    } else if (!r.allowed) {
        format(t_, retry_after_of(r));
    } else {
        format(t_, shown_count(r.reset_after_s));
    }
}

void ShownCounts::format(Text& out, std::int64_t n) noexcept {
    // shown_count and retry_after_of give 0..max_shown_count: 15 digits at most.
    auto u = static_cast<std::uint64_t>(std::clamp<std::int64_t>(n, 0, max_shown_count));
    char* const end = out.digits.data() + out.digits.size();
    char* at = end;
    for (; u >= 100; u /= 100) {
        at -= 2;
        std::memcpy(at, digit_pairs.data() + 2 * (u % 100), 2);
    }
    if (u >= 10) {
        at -= 2;
        std::memcpy(at, digit_pairs.data() + 2 * u, 2);
    } else {
        *--at = static_cast<char>('0' + u);
    }
    out.start = static_cast<unsigned char>(at - out.digits.data());
}

}  // namespace ratelimitd::headers
