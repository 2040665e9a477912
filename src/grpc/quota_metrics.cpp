// QuotaMetrics: the quota service's counters as Prometheus text.
#include "ratelimitd/grpc/quota_metrics.hpp"

#include "ratelimitd/core/label_value.hpp"

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
    render_rules(out);
    return out;
}

void QuotaMetrics::count_rule_share(std::string_view domain, std::string_view rule, const std::uint64_t* used) {
    const std::lock_guard lock(rules_mutex_);
    std::string key;
    key.reserve(domain.size() + 1 + rule.size());
    key.append(domain).append(1, '\0').append(rule);
    auto it = rules_.find(key);
    if (it == rules_.end()) it = rules_.emplace(std::move(key), RuleShares{std::string(domain), std::string(rule)}).first;
    ++it->second.shares;
    if (used == nullptr) {
        ++it->second.fallbacks;
    } else {
        it->second.global_usage = *used;
    }
}

void QuotaMetrics::render_rules(std::string& out) const {
    const std::lock_guard lock(rules_mutex_);
    if (rules_.empty()) return;
    const auto family = [&](const char* name, const char* type, const char* help, auto value) {
        fmt::format_to(std::back_inserter(out), "# HELP {0} {1}\n# TYPE {0} {2}\n", name, help, type);
        for (const auto& [key, r] : rules_) {
            fmt::format_to(std::back_inserter(out), "{}{{domain=\"{}\",rule=\"{}\"}} {}\n", name, escape_label_value(r.domain),
                           r.rule, value(r));
        }
    };
    family("ratelimitd_rlqs_rule_shares_total", "counter", "Bucket reports of the rule sent to the share ledger.",
           [](const RuleShares& r) { return r.shares; });
    family("ratelimitd_rlqs_rule_fallbacks_total", "counter",
           "Bucket reports of the rule the share ledger did not answer in time: the rule's fallback.",
           [](const RuleShares& r) { return r.fallbacks; });
    family("ratelimitd_rlqs_rule_global_usage", "gauge",
           "The window's global usage the share ledger last reported for a bucket of the rule.",
           [](const RuleShares& r) { return r.global_usage; });
}

}  // namespace ratelimitd::rls
