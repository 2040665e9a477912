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
};

/// The system clock. Thread-safe.
class SystemClock final : public Clock {
public:
    std::int64_t now_ms() const override {
        using namespace std::chrono;
        return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    }
};

}  // namespace ratelimitd
