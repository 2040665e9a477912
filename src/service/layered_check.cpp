// CheckService::check_limits: one or several limits (a policy, its windows, layered routes,
// /v1/auth) decided as one, with plans, shadow policies and the failure modes.
#include "ratelimitd/service/check_service.hpp"

#include "ratelimitd/policy/resolve.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ratelimitd::service {

namespace net = boost::asio;

namespace {

void append_listed(std::string& list, std::string_view item) {
    if (!list.empty()) list += ',';
    list += item;
}

/// The store checks of the enforced limits or of the shadow ones, and which limit each
/// check belongs to (its index in the decision's limits).
struct CheckGroup {
    std::vector<store::LimitCheck> checks;
    std::vector<std::size_t> owner;
    bool fail_closed = false;  ///< some policy in it says on_store_error: deny

    void add(std::vector<store::LimitCheck> more, std::size_t limit_index) {
        for (auto& c : more) {
            checks.push_back(std::move(c));
            owner.push_back(limit_index);
        }
    }
};

}  // namespace

net::awaitable<result<check::Verdict>> CheckService::decide(std::vector<store::LimitCheck> checks) {
    const auto started = std::chrono::steady_clock::now();
    result<check::Verdict> verdict = Problem{errc::store_unavailable, ""};
    if (checks.size() == 1) {
        // One window of one limit is an ordinary check (and keeps what the store does for those).
        verdict = co_await store_.apply(*checks.front().policy, std::move(checks.front().key), checks.front().cost);
    } else {
        verdict = co_await store_.apply_all(std::move(checks));
    }
    metrics_.observe_store_latency(std::chrono::steady_clock::now() - started);
    if (!verdict) metrics_.count_store_error(verdict.error().code);
    co_return verdict;
}

net::awaitable<result<Decision>> CheckService::check_limits(std::shared_ptr<const policy::Registry> registry,
                                                            std::vector<LimitTarget> limits, std::string scope,
                                                            std::uint32_t cost, std::optional<std::string> plan) {
    Decision d;
    d.scope = std::move(scope);
    if (limits.empty()) {
        d.policy = policy::no_policy;
        d.limited = false;
        d.verdict.allowed = true;
        co_return d;
    }

    CheckGroup enforced;
    CheckGroup shadow;
    std::vector<std::string_view> tenants;  // distinct, in order, for the decision's `tenant`
    for (std::size_t i = 0; i < limits.size(); ++i) {
        auto& l = limits[i];
        auto own = policy::limits_for(*registry, *l.policy, l.tenant, plan);
        if (!own) co_return own.error();
        l.policy = *own;
        const policy::Policy& p = *l.policy;
        if (cost > p.max_cost()) {
            co_return Problem{errc::invalid_cost, "cost: " + std::to_string(cost) + " is more than policy \"" + p.name +
                                                      "\" can ever admit (" + std::to_string(p.max_cost()) + ")"};
        }
        append_listed(d.policy, p.name);
        if (std::find(tenants.begin(), tenants.end(), l.tenant) == tenants.end()) {
            tenants.push_back(l.tenant);
            append_listed(d.tenant, l.tenant);
        }
        CheckGroup& group = p.shadow ? shadow : enforced;
        group.add(store_checks(p, registry->prefix, l.tenant, d.scope, cost), i);
        group.fail_closed = group.fail_closed || p.on_store_error == policy::OnStoreError::deny;
    }

    // Enforced limits first: when they deny, the shadow ones are neither charged nor asked
    // (a denied request counts nowhere). Shadow limits are decided apart, so that their
    // would-be denial never keeps the enforced ones from being charged.
    std::vector<std::size_t> owner;
    if (!enforced.checks.empty()) {
        auto verdict = co_await decide(std::move(enforced.checks));
        if (!verdict) co_return degrade(std::move(d), limits, enforced.fail_closed, verdict.error());
        d.verdict = std::move(*verdict);
        owner = std::move(enforced.owner);
        if (!d.verdict.allowed) {
            count(d, limits, owner);
            co_return d;
        }
    }
    d.verdict.allowed = true;
    if (!shadow.checks.empty()) {
        auto verdict = co_await decide(std::move(shadow.checks));
        if (!verdict) {
            // Shadow limits never deny: a failure of theirs allows, degraded only when nothing
            // enforced answered.
            if (owner.empty()) co_return degrade(std::move(d), limits, false, verdict.error());
            spdlog::warn("store failure for shadow policies of {}: {}", d.policy, verdict.error().detail);
        } else {
            d.shadow_denied = !verdict->allowed;
            for (auto& w : verdict->windows) d.verdict.windows.push_back(std::move(w));
            owner.insert(owner.end(), shadow.owner.begin(), shadow.owner.end());
        }
    }
    count(d, limits, owner);
    co_return d;
}

Decision CheckService::degrade(Decision d, const std::vector<LimitTarget>& limits, bool fail_closed,
                               const Problem& why) {
    // The store failed: the policies' on_store_error decides which way, and the caller is
    // told it degraded.
    d.degraded = true;
    d.store_error = why.code;
    d.verdict = {};
    d.verdict.allowed = !fail_closed;
    spdlog::warn("store failure policy={} outcome={} error={} detail=\"{}\"", d.policy,
                 d.verdict.allowed ? "fail_open" : "fail_closed", to_string(why.code), why.detail);
    for (const auto& l : limits) {
        metrics_.count_check(l.policy->name, d.verdict.allowed ? Outcome::degraded_allowed : Outcome::failed_closed,
                             false);
    }
    return d;
}

void CheckService::count(const Decision& d, const std::vector<LimitTarget>& limits,
                         const std::vector<std::size_t>& owner) {
    // Counted per limit over its own windows: a limit that would have admitted is "allowed"
    // even when another one denied the request (and charged nothing).
    for (std::size_t i = 0; i < limits.size(); ++i) {
        bool seen = false;
        bool allowed = true;
        bool near = false;
        for (std::size_t k = 0; k < owner.size() && k < d.verdict.windows.size(); ++k) {
            if (owner[k] != i) continue;
            const auto& w = d.verdict.windows[k];
            seen = true;
            allowed = allowed && w.allowed;
            // "Near the limit": an allowed check that left less than 10 % of the quota.
            near = near || w.remaining * 10 < w.limit;
        }
        if (!seen) continue;  // a shadow limit not asked because the enforced ones denied
        const policy::Policy& p = *limits[i].policy;
        const Outcome outcome = allowed ? Outcome::allowed : p.shadow ? Outcome::shadow_denied : Outcome::denied;
        metrics_.count_check(p.name, outcome, allowed && near);
    }
}

}  // namespace ratelimitd::service
