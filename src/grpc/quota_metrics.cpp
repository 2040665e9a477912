// QuotaMetrics: the quota service's counters as Prometheus text.
#include "ratelimitd/grpc/quota_metrics.hpp"

#include <fmt/format.h>

#include <iterator>

namespace ratelimitd::rls {

namespace {

void counter(std::string& out, const char* name, const char* help, std::uint64_t value) {
    fmt::format_to(std::back_inserter(out), "# HELP {0} {1}\n# TYPE {0} counter\n{0} {2}\n", name, help, value);
}

}  // namespace

std::string QuotaMetrics::render() const {
    const auto load = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); };
    std::string out;
    counter(out, "ratelimitd_rlqs_streams_total", "StreamRateLimitQuotas streams opened.", load(streams_opened_));
    fmt::format_to(std::back_inserter(out),
                   "# HELP ratelimitd_rlqs_streams_open StreamRateLimitQuotas streams open now.\n"
                   "# TYPE ratelimitd_rlqs_streams_open gauge\nratelimitd_rlqs_streams_open {}\n",
                   open_.load(std::memory_order_relaxed));
    counter(out, "ratelimitd_rlqs_streams_refused_total",
            "Streams ended at once because their connection held the most streams it may.", load(streams_refused_));
    counter(out, "ratelimitd_rlqs_reports_total", "Usage reports read.", load(reports_));
    counter(out, "ratelimitd_rlqs_buckets_left_out_total",
            "Buckets of a report left out: an id or domain past the bounds, or past 100 per report.",
            load(buckets_left_out_));
    counter(out, "ratelimitd_rlqs_assignments_total", "quota_assignment_action sent.", load(assignments_));
    counter(out, "ratelimitd_rlqs_abandons_total", "abandon_action sent (no rule names the bucket).", load(abandons_));
    counter(out, "ratelimitd_rlqs_shares_asked_total", "Bucket reports sent to the fleet's share ledger.",
            load(shares_asked_));
    counter(out, "ratelimitd_rlqs_share_fallbacks_total",
            "Bucket reports the share ledger did not answer in time: Envoy keeps its last assignment.",
            load(fallbacks_));
    fmt::format_to(std::back_inserter(out),
                   "# HELP ratelimitd_rlqs_global_usage The window's global usage the share ledger last reported.\n"
                   "# TYPE ratelimitd_rlqs_global_usage gauge\nratelimitd_rlqs_global_usage {}\n",
                   load(global_used_));
    return out;
}

}  // namespace ratelimitd::rls
