// A plan's limits as the store checks CheckService asks: grouped (enforced or shadow), with
// what each charges, and the shapes an ordinary Store::apply decides as asked.
#pragma once

#include "ratelimitd/policy/check_plan.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <cstddef>
#include <cstdint>

namespace ratelimitd::service {

/// The store checks of the enforced limits or of the shadow ones, and which limit each
/// check belongs to (its index in the plan's limits).
struct CheckGroup {
    LimitChecks checks;
    Owners owner;
    bool fail_closed = false;  ///< some limit in it says on_store_error: deny

    /// Moves the limit's keys into the checks; the limit keeps its policy and tenant.
    void add(policy::PlannedLimit& limit, std::size_t limit_index, std::uint32_t cost, const policy::CheckPlan& plan);
};

/// What one limit of the plan charges: nothing when check_only, else its own cost or the plan's.
std::uint32_t limit_cost(const policy::PlannedLimit& limit, const policy::CheckPlan& plan);

/// The plan's enforced limits, or its shadow ones, as store checks, each with its cost (0 for
/// a check_only one, which the store asks without charging: PlannedLimit::part). Moves their
/// keys out of the plan.
CheckGroup checks_of(policy::CheckPlan& plan, bool shadow);

/// True when the plan has a shadow limit with a window to ask.
bool has_shadow(const policy::CheckPlan& plan);

/// One check that an ordinary Store::apply decides as asked: a check (not a report) of one
/// window that takes its part as any check does and spends something.
bool plain_single_check(const LimitChecks& checks);

/// The one window of a plan that is a single enforced plain check (as checks_of and
/// plain_single_check would make it), or nullptr: what decide_now may ask Store::try_apply_now.
/// `cost`: what it charges.
const policy::KeyedWindow* lone_plain_window(const policy::CheckPlan& plan, std::uint32_t& cost);

}  // namespace ratelimitd::service
