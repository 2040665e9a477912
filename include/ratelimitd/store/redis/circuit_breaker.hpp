// Stops sending to a Redis that keeps failing, so checks answer by their failure mode at once
// instead of each waiting out the store timeout.
#pragma once

#include <chrono>

namespace ratelimitd::store::redis {

/// closed --(failure_threshold failures in a row)--> open --(a probe answers)--> closed.
/// While open, allow() is false and callers answer by on_store_error without asking Redis;
/// the owner probes Redis every retry_interval() and calls on_success() when it answers.
/// Each opening without a success in between doubles the interval, up to max_interval.
/// Pure state machine: time is passed in, so tests need no clock.
/// @par Thread Safety
/// Not thread-safe; each server thread owns one.
class CircuitBreaker {
public:
    using clock = std::chrono::steady_clock;

    struct Options {
        int failure_threshold = 5;
        std::chrono::milliseconds first_interval{100};
        std::chrono::milliseconds max_interval{500};
    };

    CircuitBreaker() = default;
    explicit CircuitBreaker(Options options) : options_(options) {}

    /// True when a command may be sent.
    [[nodiscard]] bool allow() const noexcept { return !open_; }
    [[nodiscard]] bool is_open() const noexcept { return open_; }

    /// A command failed (unreachable or timed out). Returns true when this opened the breaker.
    bool on_failure() noexcept {
        if (open_) {
            interval_ = std::min(interval_ * 2, options_.max_interval);
            return false;
        }
        if (++failures_ < options_.failure_threshold) return false;
        open_ = true;
        interval_ = interval_.count() == 0 ? options_.first_interval : std::min(interval_ * 2, options_.max_interval);
        return true;
    }

    /// A command or a probe got an answer. Returns true when this closed the breaker.
    bool on_success() noexcept {
        failures_ = 0;
        const bool was_open = open_;
        open_ = false;
        interval_ = std::chrono::milliseconds{0};
        return was_open;
    }

    /// How long to wait before the next probe while open.
    [[nodiscard]] std::chrono::milliseconds retry_interval() const noexcept { return interval_; }

private:
    Options options_;
    int failures_ = 0;
    bool open_ = false;
    std::chrono::milliseconds interval_{0};
};

}  // namespace ratelimitd::store::redis
