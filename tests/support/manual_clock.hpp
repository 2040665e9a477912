// A Clock that only moves when the test says so, so time-based behaviour is tested without sleeping.
#pragma once

#include "ratelimitd/core/clock.hpp"

#include <atomic>
#include <cstdint>

namespace ratelimitd::testing {

/// now_ms() returns what the test last set. Thread-safe: threads may read while the test
/// advances it.
class ManualClock final : public Clock {
public:
    explicit ManualClock(std::int64_t start_ms = 1'700'000'000'000) : now_(start_ms) {}

    std::int64_t now_ms() const override { return now_.load(std::memory_order_acquire); }

    void set(std::int64_t ms) { now_.store(ms, std::memory_order_release); }
    void advance(std::int64_t ms) { now_.fetch_add(ms, std::memory_order_acq_rel); }

private:
    std::atomic<std::int64_t> now_;
};

}  // namespace ratelimitd::testing
