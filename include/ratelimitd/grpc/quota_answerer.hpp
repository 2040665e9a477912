// The answer to one usage report: each bucket's action under the registry in force.
#pragma once

#include "ratelimitd/grpc/idle_buckets.hpp"
#include "ratelimitd/grpc/lane_ring.hpp"
#include "ratelimitd/grpc/quota_metrics.hpp"
#include "ratelimitd/grpc/quota_report.hpp"

#include "ratelimitd/store/share_ledger.hpp"

#include "envoy/service/rate_limit_quota/v3/rlqs.pb.h"

#include <memory>
#include <string>

namespace ratelimitd::rls {

/// Answers every bucket of a report at once: the rule that names it (policy::RlqsRules, the
/// registry's `rlqs:` as of this report, so a reload shows in the next answer) gives a quota
/// assignment, a bucket no rule names or idle for its rule's idle_after is abandoned. With a
/// share ledger (a Redis store), a budget's assignment is the Envoy's share of the fleet's
/// budget, asked once per report for all its buckets (blocking this thread for at most the
/// ledger's timeout); without one (the embedded store) it is the rule's whole budget.
/// @par Thread Safety
/// answer() may be called from any thread.
class QuotaAnswerer {
public:
    QuotaAnswerer(LaneRing& lanes, QuotaMetrics& metrics, QuotaReportBounds bounds,
                  std::shared_ptr<store::ShareLedger> shares = nullptr)
        : lanes_(lanes), metrics_(metrics), bounds_(bounds), shares_(std::move(shares)) {}

    /// Fills `out` with one action per usable bucket of `report` (none when nothing in it is);
    /// `idle`: the stream's, a bucket quiet for its rule's idle_after is abandoned; `envoy`:
    /// the stream's id in the share ledger.
    void answer(const envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports& report,
                envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse& out, IdleBuckets& idle,
                const std::string& envoy) const;

    [[nodiscard]] const QuotaReportBounds& bounds() const noexcept { return bounds_; }

private:
    LaneRing& lanes_;  ///< for the registry in force (any lane's road reads the same handle)
    QuotaMetrics& metrics_;
    QuotaReportBounds bounds_;
    std::shared_ptr<store::ShareLedger> shares_;  ///< null: no shared store
};

}  // namespace ratelimitd::rls
