// DelayMetrics: counted with relaxed atomics, rendered at the scrape.
#include "ratelimitd/service/delay_metrics.hpp"

#include <fmt/format.h>

namespace ratelimitd::service {

void DelayMetrics::observe_delay(DelayDoor door, std::int64_t delay_ms) noexcept {
    delayed_[static_cast<std::size_t>(door)].fetch_add(1, std::memory_order_relaxed);
    const double seconds = static_cast<double>(delay_ms) / 1000.0;
    for (std::size_t i = 0; i < delay_buckets.size(); ++i) {
        if (seconds <= delay_buckets[i]) {
            buckets_[i].fetch_add(1, std::memory_order_relaxed);
            break;
        }
    }
    count_.fetch_add(1, std::memory_order_relaxed);
    sum_ms_.fetch_add(static_cast<std::uint64_t>(delay_ms), std::memory_order_relaxed);
}

namespace {

// Takes one place of `held` unless `bound` are taken; never passes the bound, even between
// racing threads (taken first, given back when over).
bool take_place(std::atomic<std::int64_t>& held, std::int64_t bound) {
    if (held.fetch_add(1, std::memory_order_relaxed) >= bound) {
        held.fetch_sub(1, std::memory_order_relaxed);
        return false;
    }
    return true;
}

}  // namespace

HeldSlot DelayMetrics::try_hold(std::size_t process_bound, std::span<const DelayingPolicy> delaying) {
    const std::string_view first = delaying.empty() ? std::string_view("") : delaying.front().name;
    if (!take_place(held_, static_cast<std::int64_t>(process_bound))) {
        policies_.of(first).refused_by_process.fetch_add(1, std::memory_order_relaxed);
        return HeldSlot();
    }
    HeldSlot slot(new HeldPlaces{&held_, {}});  // from here on, the slot gives back what it took
    for (const auto& p : delaying) {
        if (!p.max_held) continue;
        PolicyHolds::Counts& counts = policies_.of(p.name);
        if (!take_place(counts.held, *p.max_held)) {
            counts.refused_by_policy.fetch_add(1, std::memory_order_relaxed);
            return HeldSlot();
        }
        slot->policies.push_back(&counts.held);
    }
    return slot;
}

void DelayMetrics::render(std::string& out) const {
    out += "# HELP ratelimitd_delayed_checks_total Checks admitted with a delay (max_delay), by door.\n"
           "# TYPE ratelimitd_delayed_checks_total counter\n";
    const char* doors[] = {"check", "auth"};
    for (std::size_t i = 0; i < delayed_.size(); ++i) {
        out += fmt::format("ratelimitd_delayed_checks_total{{door=\"{}\"}} {}\n", doors[i],
                           delayed_[i].load(std::memory_order_relaxed));
    }
    out += "# HELP ratelimitd_check_delay_seconds The delay of each check admitted with one.\n"
           "# TYPE ratelimitd_check_delay_seconds histogram\n";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < delay_buckets.size(); ++i) {
        cumulative += buckets_[i].load(std::memory_order_relaxed);
        out += fmt::format("ratelimitd_check_delay_seconds_bucket{{le=\"{}\"}} {}\n", delay_buckets[i], cumulative);
    }
    const std::uint64_t count = count_.load(std::memory_order_relaxed);
    out += fmt::format("ratelimitd_check_delay_seconds_bucket{{le=\"+Inf\"}} {}\n", count);
    out += fmt::format("ratelimitd_check_delay_seconds_sum {}\n",
                       static_cast<double>(sum_ms_.load(std::memory_order_relaxed)) / 1000.0);
    out += fmt::format("ratelimitd_check_delay_seconds_count {}\n", count);
    out += "# HELP ratelimitd_held_requests /v1/auth answers held now until their delay is over.\n"
           "# TYPE ratelimitd_held_requests gauge\n";
    out += fmt::format("ratelimitd_held_requests {}\n", held());
    out += "# HELP ratelimitd_held_refused_total Delayed /v1/auth checks refused because max_held_requests "
           "(bound=process) or the policy's max_held (bound=policy) were held.\n"
           "# TYPE ratelimitd_held_refused_total counter\n";
    policies_.render_refused(out);
}

}  // namespace ratelimitd::service
