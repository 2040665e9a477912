// time_ticks: steps from a fixed ladder of round durations; labels from the civil UTC time.
#include "ratelimitd/simulate/time_ticks.hpp"

#include <fmt/format.h>

#include <array>
#include <chrono>

namespace ratelimitd::simulate {
namespace {

constexpr std::int64_t tick_minute_ms = 60'000;
constexpr std::int64_t tick_day_ms = 1'440 * tick_minute_ms;
constexpr std::array<std::int64_t, 11> tick_steps{1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720};  // minutes

std::int64_t round_up(std::int64_t t, std::int64_t step) {
    const std::int64_t r = ((t % step) + step) % step;
    return r == 0 ? t : t + step - r;
}

std::string tick_label(std::int64_t at_ms, bool with_day) {
    using namespace std::chrono;
    const sys_days days = floor<std::chrono::days>(sys_time<milliseconds>(milliseconds(at_ms)));
    const year_month_day ymd(days);
    const std::int64_t of_day = at_ms - duration_cast<milliseconds>(days.time_since_epoch()).count();
    const std::int64_t hh = of_day / (60 * tick_minute_ms);
    const std::int64_t mm = of_day / tick_minute_ms % 60;
    if (!with_day) return fmt::format("{:02}:{:02}", hh, mm);
    return fmt::format("{:02}-{:02} {:02}:{:02}", static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                       hh, mm);
}

std::int64_t step_for(std::int64_t span, std::size_t most) {
    for (const std::int64_t m : tick_steps) {
        if (static_cast<std::size_t>(span / (m * tick_minute_ms)) + 1 <= most) return m * tick_minute_ms;
    }
    std::int64_t days = 1;
    while (static_cast<std::size_t>(span / (days * tick_day_ms)) + 1 > most) ++days;
    return days * tick_day_ms;
}

}  // namespace

std::vector<TimeTick> time_ticks(std::int64_t first_ms, std::int64_t last_ms, std::size_t most) {
    if (most < 2) most = 2;
    const std::int64_t span = last_ms > first_ms ? last_ms - first_ms : 0;
    const std::int64_t step = step_for(span, most);
    const bool with_day = first_ms / tick_day_ms != last_ms / tick_day_ms;
    std::vector<TimeTick> out;
    // Steps of days start at the first midnight (epoch-aligned multiples of days would not).
    const std::int64_t start = round_up(first_ms, step >= tick_day_ms ? tick_day_ms : step);
    for (std::int64_t t = start; t <= last_ms && out.size() < most; t += step) {
        out.push_back({t, tick_label(t, with_day)});
    }
    if (out.empty()) out.push_back({first_ms, tick_label(first_ms, with_day)});
    return out;
}

}  // namespace ratelimitd::simulate
