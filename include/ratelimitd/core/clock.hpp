// Wall-clock time source, injectable so the embedded store can be tested without sleeping.
#pragma once

#include <chrono>
#include <cstdint>

namespace ratelimitd {

/// Milliseconds since the Unix epoch. The Redis store never uses this: Redis TIME is the
/// only clock of its verdicts. The embedded store and backoff timers do.
class Clock {
public:
    virtual ~Clock() = default;
    virtual std::int64_t now_ms() const = 0;
    /// The time at `at`, a steady-clock instant the caller read (a request's own), so that a
    /// check costs no second clock read. The default reads now_ms(): a clock of its own
    /// (a test's) keeps its time.
    virtual std::int64_t now_ms_at(std::chrono::steady_clock::time_point at) const {
        static_cast<void>(at);
        return now_ms();
    }
};

/// The system clock. Thread-safe.
class SystemClock final : public Clock {
public:
    std::int64_t now_ms() const override {
        using namespace std::chrono;
        return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    }
    /// `at` plus the offset between the two clocks, which each thread reads afresh (both
    /// clocks, side by side) once `at` is a second past its last reading: a step or slew of
    /// the system clock is followed within a second, and a check reads no clock here.
    std::int64_t now_ms_at(std::chrono::steady_clock::time_point at) const override;
};

}  // namespace ratelimitd
