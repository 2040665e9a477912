// Awaiting a condition in a test instead of sleeping a guessed time.
#pragma once

#include <chrono>
#include <thread>

namespace ratelimitd::test {

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
