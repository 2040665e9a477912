#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace ratelimitd::test {

/// The memory store tests' epoch, in milliseconds: a whole second, so epoch seconds read as
/// E + n.
inline constexpr std::int64_t T0 = 1'700'000'000'000;

/// A policy as the registry would load it: burst defaults to the limit.
inline policy::Policy make_policy(std::string name, policy::Algorithm a, std::int64_t limit, std::int64_t window_ms,
                                  std::optional<std::int64_t> burst = std::nullopt) {
    policy::Policy p;
    p.name = std::move(name);
    p.algorithm = a;
    p.limit = limit;
    p.window = std::chrono::milliseconds(window_ms);
    p.burst = burst.value_or(limit);
    return p;
}

/// The same, named "p", for tests with a single policy.
inline policy::Policy make_policy(policy::Algorithm a, std::int64_t limit, std::int64_t window_ms) {
    return make_policy("p", a, limit, window_ms);
}

}  // namespace ratelimitd::test
