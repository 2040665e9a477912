// plan_report: a report is planned exactly as a check of cost 1, then given its mode and cost.
#include "ratelimitd/policy/report_plan.hpp"

#include "ratelimitd/policy/planner.hpp"

#include <string>

namespace ratelimitd::policy {
namespace {

// An algorithm holding leases counts leases held, not units spent: there is nothing to charge
// after the fact (a lease is taken by a check and given back by /v1/release).
result<void> check_reportable(const Policy& w, const Policy& limit) {
    if (traits(w.algorithm).reports) return {};
    return Problem{errc::invalid_cost, "cost: a report is not supported by algorithm " +
                                           std::string(to_string(w.algorithm)) + " (policy \"" + limit.name +
                                           "\"): it holds leases, taken by /v1/check and freed by /v1/release"};
}

// What a sliding log cannot do with a report of `cost` units on window `w` of `limit`: give
// units back. A large report is no problem: what the log cannot admit is one debt entry,
// bounded by max_debt (lua/sliding_log.lua).
result<void> check_refundable(const Policy& w, const Policy& limit, std::int64_t cost) {
    if (traits(w.algorithm).refunds || cost >= 0) return {};
    return Problem{errc::invalid_cost, "cost: a negative report (a refund) is not supported by algorithm " +
                                           std::string(to_string(w.algorithm)) + " (policy \"" + limit.name +
                                           "\"): its log cannot tell which entries to take back"};
}

}  // namespace

result<CheckPlan> plan_report(std::shared_ptr<const Registry> registry, const ReportRequest& req) {
    const auto most = static_cast<std::int64_t>(check::max_cost);
    if (req.cost < -most || req.cost > most) {
        return Problem{errc::invalid_cost, "cost: expected an integer -1000000..1000000, got " + std::to_string(req.cost)};
    }
    check::CheckRequest as_check = req.check;
    as_check.cost = 1;  // every limit admits 1: the report's own bounds are checked here
    auto out = plan(std::move(registry), as_check);
    if (!out) return out.error();
    for (const auto& l : out->limits) {
        for (const auto& w : l.windows) {
            if (auto ok = check_reportable(*w.limit, *l.policy); !ok) return ok.error();
            if (auto ok = check_refundable(*w.limit, *l.policy, req.cost); !ok) return ok.error();
        }
    }
    out->mode = Mode::report;
    out->report_cost = req.cost;
    return out;
}

}  // namespace ratelimitd::policy
