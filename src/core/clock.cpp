// SystemClock::now_ms_at: the system time of a steady instant, by a per-thread offset.
#include "ratelimitd/core/clock.hpp"

namespace ratelimitd {

namespace {

using steady = std::chrono::steady_clock;

/// One thread's offset from the steady clock to the system one, and when it was read.
struct ClockOffset {
    bool read = false;
    steady::time_point read_at{};
    std::chrono::nanoseconds offset{0};
};

constexpr std::chrono::seconds offset_lifetime{1};

}  // namespace

std::int64_t SystemClock::now_ms_at(steady::time_point at) const {
    using namespace std::chrono;
    thread_local ClockOffset o;
    // The offset read within a second of `at`, before or after it (an instant read earlier by
    // a request that then waited), is the offset at `at` but for the system clock's slew.
    if (!o.read || at - o.read_at >= offset_lifetime || o.read_at - at >= offset_lifetime) {
        o.read = true;
        const auto wall = system_clock::now();
        o.read_at = steady::now();
        o.offset = duration_cast<nanoseconds>(wall.time_since_epoch()) -
                   duration_cast<nanoseconds>(o.read_at.time_since_epoch());
    }
    return duration_cast<milliseconds>(at.time_since_epoch() + o.offset).count();
}

}  // namespace ratelimitd
