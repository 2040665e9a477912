// ShownCounts: the reported window's numbers formatted once (shown_counts.hpp).
#include "ratelimitd/headers/shown_counts.hpp"

#include "ratelimitd/headers/rate_limit_fields.hpp"

#include <charconv>

namespace ratelimitd::headers {

ShownCounts::ShownCounts(const check::Verdict& v) noexcept {
    const check::WindowState& r = v.reported();
    format(limit_, shown_count(r.limit));
    format(remaining_, shown_count(r.remaining));
    format(reset_, shown_count(r.reset_epoch_s));
    if (v.allowed) {
        retry_after_.digits[0] = '0';
        retry_after_.size = 1;
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
    const auto r = std::to_chars(out.digits.data(), out.digits.data() + out.digits.size(), n);
    out.size = static_cast<unsigned char>(r.ptr - out.digits.data());
}

}  // namespace ratelimitd::headers
