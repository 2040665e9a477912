// ShownCounts: the reported window's numbers as text, formatted once per answer: a check's
// body and its X-RateLimit-*, RateLimit and Retry-After lines show the same numbers, and each
// was formatted twice before (about 100 instructions a number).
#pragma once

#include "ratelimitd/check/verdict.hpp"

#include <array>
#include <cstdint>
#include <string_view>

namespace ratelimitd::headers {

/// The numbers of `v.reported()`, clamped as shown_count and retry_after_of say.
class ShownCounts {
public:
    /// `v.windows` must not be empty.
    explicit ShownCounts(const check::Verdict& v) noexcept;

    [[nodiscard]] std::string_view limit() const noexcept { return view(limit_); }
    [[nodiscard]] std::string_view remaining() const noexcept { return view(remaining_); }
    /// Epoch seconds (X-RateLimit-Reset, the body's "reset").
    [[nodiscard]] std::string_view reset() const noexcept { return view(reset_); }
    /// The body's "retry_after": 0 when the verdict admits, else Retry-After's value.
    [[nodiscard]] std::string_view retry_after() const noexcept { return view(retry_after_); }
    /// The RateLimit member's t of the reported window: its Retry-After when it denies (the
    /// verdict or the window), else the seconds to its reset.
    [[nodiscard]] std::string_view t() const noexcept { return view(t_); }

private:
    // Enough for any clamped count (15 digits), written from the end: the digits are
    // digits[start..16).
    struct Text {
        std::array<char, 16> digits;
        unsigned char start = 16;
    };
    static std::string_view view(const Text& t) noexcept {
        return {t.digits.data() + t.start, t.digits.size() - t.start};
    }
    static void format(Text& out, std::int64_t n) noexcept;

    Text limit_;
    Text remaining_;
    Text reset_;
    Text retry_after_;
    Text t_;
};

}  // namespace ratelimitd::headers
