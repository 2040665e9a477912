// Tally: counters by policy index (the handful of policies are looked up by the caller), a
// map of denied tenants per policy, and one row per minute that had requests.
#include "ratelimitd/simulate/tally.hpp"

#include <algorithm>

namespace ratelimitd::simulate {
namespace {

constexpr std::int64_t minute_ms = 60'000;

std::int64_t minute_of(std::int64_t t) { return t - ((t % minute_ms) + minute_ms) % minute_ms; }

}  // namespace

Tally::Tally(const std::vector<std::string>& policies)
    : names_(policies), totals_(policies.size()), denials_(policies.size()), delays_(policies.size()) {}

void Tally::request(std::int64_t time_ms) {
    ++requests_;
    const std::int64_t start = minute_of(time_ms);
    if (start != minute_start_) {
        auto [it, fresh] = minutes_.try_emplace(start);
        if (fresh) it->second.minute_ms = start;
        minute_ = &it->second;
        minute_start_ = start;
    }
    ++minute_->requests;
}

void Tally::checked(std::size_t policy, std::string_view tenant, bool denied, std::int64_t time_ms) {
    PolicyTotals& t = totals_[policy];
    ++t.checked;
    if (!denied) return;
    ++t.denied;
    auto& by_tenant = denials_[policy];
    auto it = by_tenant.find(std::string(tenant));
    if (it == by_tenant.end()) {
        it = by_tenant.emplace(std::string(tenant), Denial{0, time_ms}).first;
        ++t.tenants_denied;
    }
    ++it->second.denied;
    it->second.first_ms = std::min(it->second.first_ms, time_ms);
    if (minute_ != nullptr) ++minute_->denied[names_[policy]];
}

void Tally::decided(bool limited, bool denied) {
    if (!limited) ++unmatched_;
    if (!denied) return;
    ++denied_requests_;
    if (minute_ != nullptr) ++minute_->denied_requests;
}

void Tally::delayed(std::size_t policy, std::int64_t delay_ms) { delays_[policy].add(delay_ms); }

Summary Tally::summary() const {
    Summary s;
    s.requests = requests_;
    s.unmatched = unmatched_;
    s.denied_requests = denied_requests_;
    for (std::size_t i = 0; i < names_.size(); ++i) {
        PolicyTotals& t = s.policies[names_[i]] = totals_[i];
        t.delayed = delays_[i].count();
        t.delay_p50_ms = delays_[i].percentile(0.5);
        t.delay_p99_ms = delays_[i].percentile(0.99);
        t.delay_max_ms = delays_[i].max();
        for (const auto& [tenant, d] : denials_[i]) s.denials.push_back({names_[i], tenant, d.denied, d.first_ms});
    }
    std::sort(s.denials.begin(), s.denials.end(), [](const TenantDenial& a, const TenantDenial& b) {
        if (a.denied != b.denied) return a.denied > b.denied;
        if (a.first_denied_ms != b.first_denied_ms) return a.first_denied_ms < b.first_denied_ms;
        if (a.policy != b.policy) return a.policy < b.policy;
        return a.tenant < b.tenant;
    });
    for (const auto& [start, row] : minutes_) s.per_minute.push_back(row);
    return s;
}

}  // namespace ratelimitd::simulate
