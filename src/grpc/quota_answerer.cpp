// QuotaAnswerer: a report's buckets matched to the registry's rlqs: rules.
#include "ratelimitd/grpc/quota_answerer.hpp"

#include "ratelimitd/grpc/quota_assignment.hpp"
#include "ratelimitd/policy/policy.hpp"

namespace ratelimitd::rls {

void QuotaAnswerer::answer(const envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports& wire,
                           envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse& out,
                           IdleBuckets& idle) const {
    const QuotaReport report = read_quota_report(wire, bounds_);
    metrics_.count_report(report.left_out);
    if (report.buckets.empty()) return;
    // One snapshot for the whole report: a reload between two buckets cannot split it.
    const auto registry = lanes_.next().road.registry();
    const policy::RlqsRules* rules = registry ? registry->rlqs.get() : nullptr;
    for (const ReportedBucket& bucket : report.buckets) {
        auto& action = *out.add_bucket_action();
        const policy::RlqsRule* rule = rules ? rules->find(report.domain, bucket.id) : nullptr;
        const bool used = bucket.allowed > 0 || bucket.denied > 0;
        if (rule == nullptr || idle.quiet_for(bucket.id, used, bucket.elapsed, rule->idle_after)) {
            abandon_bucket(*bucket.wire_id, action);
            metrics_.count_abandon();
            continue;
        }
        // The whole budget: the fleet's split of it (docs/rlqs.md, "Shares") is not built yet.
        assign_quota(*rule, static_cast<std::uint64_t>(rule->limit), *bucket.wire_id, action);
        metrics_.count_assignment();
    }
}

}  // namespace ratelimitd::rls
