// Awaiting a condition in a test instead of sleeping a guessed time.
#pragma once

#include <chrono>
#include <thread>

namespace ratelimitd::test {

/// How long a test waits for a process it started (redis-server, ratelimitd, a cluster) to
/// answer, or to exit after SIGTERM. A bound, never a delay: a passing run waits only as long as
/// the process takes. Generous because CI may run on a 2-core machine with both cores busy and
/// a sanitized build, where a start measured in milliseconds on a quiet machine took seconds.
inline constexpr std::chrono::seconds process_start_bound{60};

/// Polls `done` every `poll` until it holds or `limit` has passed; returns its last value.
template <class Pred>
bool wait_until(Pred done, std::chrono::milliseconds limit,
                std::chrono::milliseconds poll = std::chrono::milliseconds(20)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
        if (done()) return true;
        std::this_thread::sleep_for(poll);
    }
    return done();
}

}  // namespace ratelimitd::test
