// The answer to one usage report: each bucket's action under the registry in force.
#pragma once

#include "ratelimitd/grpc/idle_buckets.hpp"
#include "ratelimitd/grpc/lane_ring.hpp"
#include "ratelimitd/grpc/quota_metrics.hpp"
#include "ratelimitd/grpc/quota_report.hpp"

#include "envoy/service/rate_limit_quota/v3/rlqs.pb.h"

namespace ratelimitd::rls {

/// Answers every bucket of a report at once: the rule that names it (policy::RlqsRules, the
/// registry's `rlqs:` as of this report, so a reload shows in the next answer) gives a quota
/// assignment, a bucket no rule names or idle for its rule's idle_after is abandoned. Nothing here calls the store.
/// @par Thread Safety
/// answer() may be called from any thread.
class QuotaAnswerer {
public:
    QuotaAnswerer(LaneRing& lanes, QuotaMetrics& metrics, QuotaReportBounds bounds)
        : lanes_(lanes), metrics_(metrics), bounds_(bounds) {}

    /// Fills `out` with one action per usable bucket of `report` (none when nothing in it is);
    /// `idle`: the stream's, a bucket quiet for its rule's idle_after is abandoned.
    void answer(const envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports& report,
                envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse& out, IdleBuckets& idle) const;

    [[nodiscard]] const QuotaReportBounds& bounds() const noexcept { return bounds_; }

private:
    LaneRing& lanes_;  ///< for the registry in force (any lane's road reads the same handle)
    QuotaMetrics& metrics_;
    QuotaReportBounds bounds_;
};

}  // namespace ratelimitd::rls
