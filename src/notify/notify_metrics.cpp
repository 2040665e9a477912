// NotifyMetrics: counters per target name (names come from the config: a bounded label set).
#include "ratelimitd/notify/notify_metrics.hpp"

#include <fmt/format.h>

namespace ratelimitd::notify {

namespace {

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

NotifyMetrics::PerTarget& NotifyMetrics::of(std::string_view target) {
    std::lock_guard lock(mu_);
    auto it = targets_.find(target);
    if (it == targets_.end()) it = targets_.emplace(std::string(target), std::make_unique<PerTarget>()).first;
    return *it->second;
}

void NotifyMetrics::observe_attempt(std::string_view target, std::chrono::nanoseconds d) {
    PerTarget& t = of(target);
    const double seconds = std::chrono::duration<double>(d).count();
    for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
        if (seconds <= latency_buckets[i]) {
            t.buckets[i].fetch_add(1, std::memory_order_relaxed);
            break;
        }
    }
    t.attempts.fetch_add(1, std::memory_order_relaxed);
    t.sum_ns.fetch_add(static_cast<std::uint64_t>(d.count() > 0 ? d.count() : 0), std::memory_order_relaxed);
}

std::string NotifyMetrics::render() const {
    std::string out;
    std::lock_guard lock(mu_);
    const auto per_target = [&](std::string_view name, std::string_view help, auto member) {
        header(out, name, "counter", help);
        for (const auto& [target, t] : targets_) {
            const auto value = ((*t).*member).load(std::memory_order_relaxed);
            out += fmt::format("{}{{target=\"{}\"}} {}\n", name, target, value);
        }
    };
    per_target("ratelimitd_notify_sent_total", "Quota webhook events a target accepted (2xx), by target.",
               &PerTarget::sent);
    per_target("ratelimitd_notify_failed_total",
               "Quota webhook events given up after the last attempt or the deadline, by target.", &PerTarget::failed);
    per_target("ratelimitd_notify_retried_total",
               "Quota webhook delivery attempts after a first one failed, by target.", &PerTarget::retried);
    header(out, "ratelimitd_notify_latency_seconds", "histogram",
           "Time of one quota webhook delivery attempt, answered or not, by target.");
    for (const auto& [target, t] : targets_) {
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
            cumulative += t->buckets[i].load(std::memory_order_relaxed);
            out += fmt::format("ratelimitd_notify_latency_seconds_bucket{{target=\"{}\",le=\"{}\"}} {}\n", target,
                               latency_buckets[i], cumulative);
        }
        const auto total = t->attempts.load(std::memory_order_relaxed);
        out += fmt::format("ratelimitd_notify_latency_seconds_bucket{{target=\"{}\",le=\"+Inf\"}} {}\n", target, total);
        out += fmt::format("ratelimitd_notify_latency_seconds_sum{{target=\"{}\"}} {}\n", target,
                           static_cast<double>(t->sum_ns.load(std::memory_order_relaxed)) / 1e9);
        out += fmt::format("ratelimitd_notify_latency_seconds_count{{target=\"{}\"}} {}\n", target, total);
    }
    header(out, "ratelimitd_notify_dropped_total", "counter",
           "Quota webhook events dropped because the queue (notify_queue) was full.");
    out += fmt::format("ratelimitd_notify_dropped_total {}\n", dropped_.load(std::memory_order_relaxed));
    header(out, "ratelimitd_notify_queued", "gauge", "Quota webhook events waiting for a free delivery slot.");
    out += fmt::format("ratelimitd_notify_queued {}\n", queued_.load(std::memory_order_relaxed));
    return out;
}

}  // namespace ratelimitd::notify
