// envoyproxy/ratelimit's stats of ShouldRateLimit calls (ERL mode): per descriptor key path
// total_hits, over_limit, near_limit, within_limit and shadow_mode, and the service's own
// counters, counted as its base_limiter.go and service count them.
#pragma once

#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/rls_request.hpp"
#include "ratelimitd/service/check_service.hpp"
#include "ratelimitd/stats/erl_stat_table.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace ratelimitd::stats {

struct ErlStatsOptions {
    /// NEAR_LIMIT_RATIO: hits past floor(limit * ratio) and within the limit are near_limit.
    float near_limit_ratio = 0.8F;
    /// Descriptor key paths in all (the configured ones are bounded by the config already).
    std::size_t max_keys = 20'000;
    /// Of those, paths that carry values clients sent (detailed_metric, value_to_metric, a
    /// descriptor's own limit, an unknown domain): past it such calls are counted in dropped().
    std::size_t max_value_keys = 2'000;
};

/// Counts calls into an ErlStatTable; a rule's counters are found once (RlsRule::stats) and
/// kept, so a call costs an atomic add per counter it moves.
/// @par Thread Safety
/// Every member may be called from any thread.
class ErlStats {
public:
    explicit ErlStats(ErlStatsOptions options = {});

    /// A decided call: `decision` is nullptr when the plan was never_admitted (decided without
    /// the store). `shadowed_over`: SHADOW_MODE turned an OVER_LIMIT answer into OK.
    void count_call(const policy::RlsRequest& req, const policy::RlsPlan& plan, const service::Decision* decision,
                    bool shadowed_over);
    /// A call that got no answer: a store failure (redis_error) or a refused request
    /// (service_error).
    void count_failure(errc code);
    /// One ShouldRateLimit call over gRPC (ratelimit_server.ShouldRateLimit.total_requests).
    void count_grpc_call() noexcept { grpc_calls_->add(1); }

    /// config_load_success and config_load_error are read from where reloads are counted.
    void set_config_loads(std::function<std::pair<std::uint64_t, std::uint64_t>()> loads);
    /// Brings config_load_success/config_load_error up to date (before a flush or a scrape).
    void refresh_config_loads();

    [[nodiscard]] const ErlStatTable& table() const noexcept { return table_; }
    /// Prometheus text of ratelimitd's own series about them: names made, counts dropped.
    [[nodiscard]] std::string render_own() const;

private:
    const DescriptorCounters* counters_of(const policy::RlsRequest& req, const policy::RlsPlan& plan,
                                          std::size_t i);
    static void count_over(const DescriptorCounters& c, std::uint64_t limit, std::uint64_t near,
                           const check::WindowState& w, std::uint64_t hits, bool shadow);
    void count_descriptor(const DescriptorCounters& c, const policy::RlsPlan& plan,
                          const policy::RlsDescriptorPlan& dp, const service::Decision* decision,
                          std::uint64_t hits) const;

    const float near_limit_ratio_;
    ErlStatTable table_;
    ErlCounter* grpc_calls_;
    ErlCounter* global_shadow_mode_;
    ErlCounter* redis_error_;
    ErlCounter* service_error_;
    ErlCounter* config_load_success_;
    ErlCounter* config_load_error_;
    std::function<std::pair<std::uint64_t, std::uint64_t>()> loads_;
};

}  // namespace ratelimitd::stats
