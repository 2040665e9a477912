// ErlStats: each limited descriptor's hits split as envoyproxy/ratelimit's base limiter
// splits them (within, near, over, shadow), on the counters of its key path.
#include "ratelimitd/stats/erl_stats.hpp"

#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/stats/erl_stat_path.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace ratelimitd::stats {

namespace {

using Stat = DescriptorCounters::Stat;

// Kept by a rule whose stat name follows the values sent: never a counter.
constexpr char follows_values = 0;

std::uint64_t hits_of(const policy::RlsRequest& req, std::size_t i) {
    const auto& own = req.descriptors[i].hits_addend;
    if (own) return *own;  // 0 included: asked without charging, counted as 0 hits
    return req.hits_addend == 0 ? 1 : req.hits_addend;
}

}  // namespace

ErlStats::ErlStats(ErlStatsOptions options)
    : near_limit_ratio_(options.near_limit_ratio),
      table_(options.max_keys, options.max_value_keys),
      grpc_calls_(table_.counter("ratelimit_server.ShouldRateLimit.total_requests", KeyOrigin::config)),
      global_shadow_mode_(table_.counter("ratelimit.service.global_shadow_mode", KeyOrigin::config)),
      redis_error_(table_.counter("ratelimit.service.call.should_rate_limit.redis_error", KeyOrigin::config)),
      service_error_(table_.counter("ratelimit.service.call.should_rate_limit.service_error", KeyOrigin::config)),
      config_load_success_(table_.counter("ratelimit.service.config_load_success", KeyOrigin::config)),
      config_load_error_(table_.counter("ratelimit.service.config_load_error", KeyOrigin::config)) {}

void ErlStats::set_config_loads(std::function<std::pair<std::uint64_t, std::uint64_t>()> loads) {
    loads_ = std::move(loads);
}

void ErlStats::refresh_config_loads() {
    if (!loads_) return;
    const auto [ok, failed] = loads_();
    config_load_success_->value.store(ok, std::memory_order_relaxed);
    config_load_error_->value.store(failed, std::memory_order_relaxed);
}

void ErlStats::count_failure(errc code) {
    (code == errc::store_unavailable || code == errc::store_timeout ? redis_error_ : service_error_)->add(1);
}

const DescriptorCounters* ErlStats::counters_of(const policy::RlsRequest& req, const policy::RlsPlan& plan,
                                                std::size_t i) {
    const auto& dp = plan.descriptors[i];
    const auto& entries = req.descriptors[i].entries;
    if (dp.rule == nullptr) {
        return table_.descriptor(sanitize_stat_name(override_stat_path(req.domain, entries)), KeyOrigin::values);
    }
    // What the rule keeps: its own path's counters, or the mark of a name that follows the
    // values sent (detailed_metric, value_to_metric), which is looked up per call.
    const void* kept = dp.rule->stats.load();
    if (kept != nullptr && kept != &follows_values) return static_cast<const DescriptorCounters*>(kept);
    const auto* domain = plan.check.registry->domains->find(req.domain);
    if (domain != nullptr) {
        if (auto path = value_stat_path(*domain, *dp.rule, entries)) {
            dp.rule->stats.store(&follows_values);
            return table_.descriptor(sanitize_stat_name(*path), KeyOrigin::values);
        }
    }
    const auto* made = table_.descriptor(sanitize_stat_name(dp.rule->label), KeyOrigin::config);
    if (made != nullptr) dp.rule->stats.store(made);
    return made;
}

// envoyproxy/ratelimit's split of a denied descriptor's hits (its base limiter's
// checkOverLimitThreshold): all over when the count was past the limit before them, else those
// past the limit over and those between the near threshold and the limit near. An answer with
// no count (the denial cache: its local cache) counts every hit over, as there.
void ErlStats::count_over(const DescriptorCounters& c, std::uint64_t limit, std::uint64_t near,
                          const check::WindowState& w, std::uint64_t hits, bool shadow) {
    const auto after = limit + static_cast<std::uint64_t>(std::max<std::int64_t>(0, w.past_limit));
    const std::uint64_t before = after >= hits ? after - hits : 0;
    if (w.past_limit <= 0 || before >= limit) {
        c.add(Stat::over_limit, hits);
        if (shadow) c.add(Stat::shadow_mode, hits);
        return;
    }
    c.add(Stat::over_limit, after - limit);
    c.add(Stat::near_limit, limit - std::min(limit, std::max(near, before)));  // a ratio above 1: none
    if (shadow) c.add(Stat::shadow_mode, after - limit);
}

void ErlStats::count_descriptor(const DescriptorCounters& c, const policy::RlsPlan& plan,
                                const policy::RlsDescriptorPlan& dp, const service::Decision* decision,
                                std::uint64_t hits) const {
    c.add(Stat::total_hits, hits);
    const bool shadow = dp.limit < plan.check.limits.size() && plan.check.limits[dp.limit].policy->shadow;
    if (decision == nullptr) {
        // Never admitted: over its limit whatever was counted before.
        if (dp.never_admitted) c.add(Stat::over_limit, hits);
        return;
    }
    const check::WindowState* w = decision->degraded ? nullptr : decision->window_of(dp.limit);
    if (w == nullptr) return;  // no number is known (a store failure, or not decided)
    const std::uint64_t limit = dp.requests_per_unit;
    const auto near = static_cast<std::uint64_t>(std::floor(static_cast<float>(limit) * near_limit_ratio_));
    if (!w->allowed) {
        count_over(c, limit, near, *w, hits, shadow);
        return;
    }
    const std::uint64_t after = limit - static_cast<std::uint64_t>(std::clamp<std::int64_t>(w->remaining, 0,
                                                                                            static_cast<std::int64_t>(limit)));
    const std::uint64_t before = after >= hits ? after - hits : 0;
    c.add(Stat::within_limit, hits);
    if (after > near) c.add(Stat::near_limit, before >= near ? hits : after - near);
}

void ErlStats::count_call(const policy::RlsRequest& req, const policy::RlsPlan& plan,
                          const service::Decision* decision, bool shadowed_over) {
    // A domain no config names plans every descriptor under one fixed label (which a domain
    // named so could share: only then is the domain looked up).
    const auto& domains = plan.check.registry->domains;
    if (!plan.descriptors.empty() && plan.descriptors.front().label == policy::unknown_domain_label &&
        (!domains || domains->find(req.domain) == nullptr)) {
        // envoyproxy/ratelimit counts each descriptor of a call to a domain it does not know.
        const std::string name = "ratelimit.service.rate_limit." + sanitize_stat_name(policy::escape_label_part(req.domain)) +
                                 ".domain_not_found";
        if (ErlCounter* c = table_.counter(name, KeyOrigin::values)) c->add(req.descriptors.size());
        return;
    }
    if (decision != nullptr && decision->degraded) redis_error_->add(1);
    if (shadowed_over) global_shadow_mode_->add(1);
    const std::size_t n = std::min(plan.descriptors.size(), req.descriptors.size());
    for (std::size_t i = 0; i < n; ++i) {
        const auto& dp = plan.descriptors[i];
        if (dp.kind != policy::RlsDescriptorPlan::Kind::limited) continue;
        if (const DescriptorCounters* c = counters_of(req, plan, i)) count_descriptor(*c, plan, dp, decision, hits_of(req, i));
    }
}

std::string ErlStats::render_own() const {
    return fmt::format(
        "# HELP ratelimitd_erl_stats_counters ERL-mode stat counters made (each kept for the process's life).\n"
        "# TYPE ratelimitd_erl_stats_counters gauge\n"
        "ratelimitd_erl_stats_counters {}\n"
        "# HELP ratelimitd_erl_stats_dropped_total ERL-mode stat counts that found no counter: the bound on stat "
        "names (those from values sent, or all) was reached.\n"
        "# TYPE ratelimitd_erl_stats_dropped_total counter\n"
        "ratelimitd_erl_stats_dropped_total {}\n",
        table_.size(), table_.dropped());
}

}  // namespace ratelimitd::stats
