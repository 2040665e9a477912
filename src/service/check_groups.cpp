// A plan's limits as store checks (check_groups.hpp).
#include "check_groups.hpp"

#include <algorithm>
#include <utility>

namespace ratelimitd::service {

void CheckGroup::add(policy::PlannedLimit& limit, std::size_t limit_index, std::uint32_t cost,
                     const policy::CheckPlan& plan) {
    // A report charges every limit the plan's report_cost, unless the limit carries its own
    // (an Envoy call denied under envoy_denied_calls: charge: each descriptor's cost).
    const std::int64_t report_cost =
        plan.mode == policy::Mode::report && limit.cost != 0 ? limit.cost : plan.report_cost;
    for (auto& w : limit.windows) {
        checks.push_back(store::LimitCheck{w.limit, std::move(w.key), cost, plan.mode, report_cost, limit.part});
        owner.push_back(limit_index);
    }
    fail_closed = fail_closed || limit.fail_closed();
}

std::uint32_t limit_cost(const policy::PlannedLimit& limit, const policy::CheckPlan& plan) {
    return limit.check_only ? 0 : limit.cost != 0 ? limit.cost : plan.cost;
}

CheckGroup checks_of(policy::CheckPlan& plan, bool shadow) {
    CheckGroup group;
    for (std::size_t i = 0; i < plan.limits.size(); ++i) {
        if (plan.limits[i].shadow() != shadow) continue;
        group.add(plan.limits[i], i, limit_cost(plan.limits[i], plan), plan);
    }
    return group;
}

bool has_shadow(const policy::CheckPlan& plan) {
    return std::any_of(plan.limits.begin(), plan.limits.end(),
                       [](const auto& l) { return l.shadow() && !l.windows.empty(); });
}

bool plain_single_check(const LimitChecks& checks) {
    if (checks.size() != 1) return false;
    const store::LimitCheck& c = checks.front();
    return c.mode == policy::Mode::check && c.part == policy::Part::decide && c.cost >= 1;
}

const policy::KeyedWindow* lone_plain_window(const policy::CheckPlan& plan, std::uint32_t& cost) {
    if (plan.single_call || plan.mode != policy::Mode::check || plan.limits.size() != 1) return nullptr;
    const policy::PlannedLimit& limit = plan.limits.front();
    if (limit.shadow() || limit.windows.size() != 1 || limit.part != policy::Part::decide) return nullptr;
    cost = limit_cost(limit, plan);
    return cost >= 1 ? &limit.windows.front() : nullptr;
}

}  // namespace ratelimitd::service
