// One verdict window by its numbers, for the tests of what the HTTP layer renders from it.
#pragma once

#include "ratelimitd/check/verdict.hpp"

#include <cstdint>
#include <string>
#include <utility>

namespace ratelimitd::test {

inline check::WindowState window(std::string policy, bool allowed, std::int64_t limit, std::int64_t window_s,
                                 std::int64_t remaining, std::int64_t reset_epoch_s, std::int64_t reset_after_s,
                                 std::int64_t retry_after_s) {
    check::WindowState w;
    w.policy = std::move(policy);
    w.allowed = allowed;
    w.limit = limit;
    w.window_s = window_s;
    w.remaining = remaining;
    w.reset_epoch_s = reset_epoch_s;
    w.reset_after_s = reset_after_s;
    w.retry_after_s = retry_after_s;
    return w;
}

}  // namespace ratelimitd::test
