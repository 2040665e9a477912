// Planning POST /v1/report: charge after the fact (docs/policies.md).
#pragma once

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/check_plan.hpp"

#include <cstdint>
#include <memory>

namespace ratelimitd::policy {

/// A parsed report: what /v1/check would take (its cost unused), and the signed units to
/// charge (negative: a refund of a reservation made with a check's cost).
struct ReportRequest {
    check::CheckRequest check;
    std::int64_t cost = 0;  ///< -1000000..1000000
};

/// Plans a report as plan(CheckRequest) plans a check (same validation, same limits of a
/// layered route, same keys), in Mode::report with `cost` charged to every limit. Fails with
/// invalid_cost for |cost| > 1000000, for a negative cost on a sliding_log limit (its log
/// cannot tell which entries to take back) and for a sliding_log cost above its limit (one
/// log entry per unit). Never throws but for bad_alloc.
result<CheckPlan> plan_report(std::shared_ptr<const Registry> registry, const ReportRequest& req);

}  // namespace ratelimitd::policy
