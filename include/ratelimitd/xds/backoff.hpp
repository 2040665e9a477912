// The wait before a new xDS stream after one failed: envoyproxy/ratelimit's (its xDS client
// uses github.com/jpillora/backoff with XDS_CLIENT_BACKOFF_*), so the same settings wait alike.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace ratelimitd::xds {

struct BackoffOptions {
    std::chrono::milliseconds initial{10'000};
    std::chrono::milliseconds max{60'000};
    /// Growth per attempt: the n-th wait (from 0) is initial * factor^n, within [initial, max].
    /// envoyproxy/ratelimit's default 0.5 (<= 1) never grows: every wait is `initial`. 0: 2.
    double factor = 0.5;
    /// Each wait drawn uniformly between `initial` and its grown value.
    bool jitter = true;
};

/// Attempts count up until reset() (a stream that delivered a config): a control plane that
/// keeps failing is asked at most once per wait, never in a storm.
/// @par Thread Safety
/// One thread.
class Backoff {
public:
    /// `uniform` returns a number in [0, 1); the tests pass their own.
    explicit Backoff(BackoffOptions options, std::function<double()> uniform = {});

    /// The next wait; counts one attempt.
    std::chrono::milliseconds next();
    void reset() noexcept { attempt_ = 0; }
    [[nodiscard]] std::uint32_t attempt() const noexcept { return attempt_; }

private:
    BackoffOptions options_;
    std::function<double()> uniform_;
    std::uint32_t attempt_ = 0;
};

}  // namespace ratelimitd::xds
