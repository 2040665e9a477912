// headers::ShownCounts: the reported window's numbers as text, written two digits a step from
// the end of their buffer; every length from one digit to the fifteen of max_shown_count, and
// the clamps shown_count and retry_after_of apply.
#include "ratelimitd/headers/shown_counts.hpp"

#include "ratelimitd/headers/rate_limit_fields.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

using ratelimitd::check::Verdict;
using ratelimitd::check::WindowState;
namespace headers = ratelimitd::headers;

Verdict one_window(bool allowed, std::int64_t limit, std::int64_t remaining, std::int64_t retry_after_s) {
    Verdict v;
    v.allowed = allowed;
    WindowState& w = v.windows.emplace_back();
    w.policy = "api";
    w.allowed = allowed;
    w.limit = limit;
    w.window_s = 60;
    w.remaining = remaining;
    w.reset_epoch_s = 1764518478;
    w.reset_after_s = 18;
    w.retry_after_s = retry_after_s;
    return v;
}

TEST(ShownCounts, EveryLengthOfNumberReadsAsItsDecimal) {
    std::int64_t n = 0;
    for (int digits = 1; digits <= 15; ++digits) {
        for (const std::int64_t value : {n, n + 1, n * 10 + 9}) {
            if (value > headers::max_shown_count) continue;
            const headers::ShownCounts shown(one_window(true, value, value, 0));
            EXPECT_EQ(shown.limit(), std::to_string(value));
            EXPECT_EQ(shown.remaining(), std::to_string(value));
        }
        n = n * 10 + 9;  // 9, 99, 999, ...
    }
    const headers::ShownCounts most(one_window(true, headers::max_shown_count, 100, 0));
    EXPECT_EQ(most.limit(), "999999999999999");
    EXPECT_EQ(most.remaining(), "100");
}

TEST(ShownCounts, NumbersAreClampedAsTheHeaderRulesSay) {
    const headers::ShownCounts shown(one_window(true, headers::max_shown_count + 1, -3, 0));
    EXPECT_EQ(shown.limit(), "999999999999999");
    EXPECT_EQ(shown.remaining(), "0");
    EXPECT_EQ(shown.reset(), "1764518478");
    EXPECT_EQ(shown.retry_after(), "0");  // an admitted check's
    EXPECT_EQ(shown.t(), "18");           // the seconds to its reset
}

TEST(ShownCounts, ADenialShowsItsRetryAfterAsT) {
    const headers::ShownCounts denied(one_window(false, 10, 0, 0));
    EXPECT_EQ(denied.retry_after(), "1");  // at least one second
    EXPECT_EQ(denied.t(), "1");
    const headers::ShownCounts later(one_window(false, 10, 0, 42));
    EXPECT_EQ(later.retry_after(), "42");
    EXPECT_EQ(later.t(), "42");
}

}  // namespace
