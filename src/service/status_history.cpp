// StatusHistory: each record() makes one fixed-size sample from two sets of totals; the top
// policies are chosen per sample, so a sample never grows with the number of policies.
#include "ratelimitd/service/status_history.hpp"

#include <algorithm>
#include <cmath>

namespace ratelimitd::service {
namespace {

std::uint64_t rise(std::uint64_t now, std::uint64_t before) { return now >= before ? now - before : now; }

// The upper bound (ms) of the bucket the `q` quantile of `counts` falls in; the last bound
// when it is above them all, -1 when there is nothing to rank.
double quantile_ms(const std::array<std::uint64_t, store_latency_buckets.size()>& counts, std::uint64_t over,
                   double q) {
    std::uint64_t total = over;
    for (const std::uint64_t n : counts) total += n;
    if (total == 0) return -1;
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total)));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        seen += counts[i];
        if (seen >= rank) return store_latency_buckets[i] * 1000.0;
    }
    return store_latency_buckets.back() * 1000.0;
}

void fill_denials(StatusSample& s, const MetricTotals& now, const MetricTotals& before) {
    std::vector<PolicyDenials> all;
    for (const auto& [policy, total] : now.denied) {
        const auto it = before.denied.find(policy);
        const std::uint64_t n = rise(total, it == before.denied.end() ? 0 : it->second);
        if (n > 0) all.push_back({policy, n});
    }
    std::sort(all.begin(), all.end(), [](const PolicyDenials& a, const PolicyDenials& b) {
        return a.denied != b.denied ? a.denied > b.denied : a.policy < b.policy;
    });
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (i < s.denied.size()) {
            s.denied[i] = std::move(all[i]);
        } else {
            s.denied_other += all[i].denied;
        }
    }
}

void fill_store(StatusSample& s, const MetricTotals& now, const MetricTotals& before) {
    std::array<std::uint64_t, store_latency_buckets.size()> counts{};
    for (std::size_t i = 0; i < counts.size(); ++i) {
        counts[i] = rise(now.store_latency[i], before.store_latency[i]);
        s.store_calls += counts[i];
    }
    const std::uint64_t over = rise(now.store_latency_over, before.store_latency_over);
    s.store_calls += over;
    s.store_p50_ms = quantile_ms(counts, over, 0.5);
    s.store_p99_ms = quantile_ms(counts, over, 0.99);
    s.store_errors = rise(now.store_errors, before.store_errors);
}

}  // namespace

void StatusHistory::record(std::int64_t now_ms, const StatusInputs& totals) {
    const std::lock_guard lock(mu_);
    if (last_) {
        StatusSample s;
        s.at_ms = now_ms;
        s.span_ms = std::max<std::int64_t>(1, now_ms - last_ms_);
        for (std::size_t o = 0; o < s.checks.size(); ++o) {
            s.checks[o] = rise(totals.metrics.checks[o], last_->metrics.checks[o]);
        }
        fill_denials(s, totals.metrics, last_->metrics);
        fill_store(s, totals.metrics, last_->metrics);
        s.webhooks_sent = rise(totals.webhooks_sent, last_->webhooks_sent);
        s.webhooks_dropped = rise(totals.webhooks_dropped, last_->webhooks_dropped);
        s.held = totals.held;
        ring_[next_] = std::move(s);
        next_ = (next_ + 1) % capacity;
        size_ = std::min(size_ + 1, capacity);
    }
    last_ = totals;
    last_ms_ = now_ms;
}

std::vector<StatusSample> StatusHistory::samples() const {
    const std::lock_guard lock(mu_);
    std::vector<StatusSample> out;
    out.reserve(size_);
    const std::size_t first = (next_ + capacity - size_) % capacity;
    for (std::size_t i = 0; i < size_; ++i) out.push_back(ring_[(first + i) % capacity]);
    return out;
}

}  // namespace ratelimitd::service
