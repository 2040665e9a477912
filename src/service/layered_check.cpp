// CheckService::check_limits: several limits (layered routes, /v1/auth) decided as one.
#include "ratelimitd/service/check_service.hpp"

#include "ratelimitd/check/key.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ratelimitd::service {

namespace net = boost::asio;

namespace {

void append_listed(std::string& list, std::string_view item) {
    if (!list.empty()) list += ',';
    list += item;
}

}  // namespace

net::awaitable<result<Decision>> CheckService::check_limits(std::shared_ptr<const policy::Registry> registry,
                                                            std::vector<LimitTarget> limits, std::string scope,
                                                            std::uint32_t cost) {
    Decision d;
    d.scope = std::move(scope);
    if (limits.empty()) {
        d.policy = policy::no_policy;
        d.limited = false;
        d.verdict.allowed = true;
        co_return d;
    }

    std::vector<store::LimitCheck> checks;
    checks.reserve(limits.size());
    std::vector<std::string_view> tenants;  // distinct, in order, for the decision's `tenant`
    for (const auto& l : limits) {
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
        checks.push_back(store::LimitCheck{&p, check::make_key(registry->prefix, p.name, l.tenant, d.scope), cost});
    }

    const auto started = std::chrono::steady_clock::now();
    result<check::Verdict> verdict = Problem{errc::store_unavailable, ""};
    if (checks.size() == 1) {
        // One limit is an ordinary check (and keeps whatever the store does for those).
        verdict = co_await store_.apply(*checks.front().policy, std::move(checks.front().key), cost);
    } else {
        verdict = co_await store_.apply_all(std::move(checks));
    }
    metrics_.observe_store_latency(std::chrono::steady_clock::now() - started);

    if (verdict) {
        d.verdict = std::move(*verdict);
        // Counted per policy by its own window: a limit that would have admitted is "allowed"
        // even when another one denied the request (and charged nothing).
        for (const auto& w : d.verdict.windows) {
            const bool near = w.allowed && w.remaining * 10 < w.limit;
            metrics_.count_check(w.policy, w.allowed ? Outcome::allowed : Outcome::denied, near);
        }
        co_return d;
    }
    metrics_.count_store_error(verdict.error().code);

    // The store failed: fail closed when any of the policies asks for it.
    d.degraded = true;
    d.store_error = verdict.error().code;
    d.verdict.allowed = std::all_of(limits.begin(), limits.end(), [](const LimitTarget& l) {
        return l.policy->on_store_error == policy::OnStoreError::allow;
    });
    spdlog::warn("store failure policy={} outcome={} error={} detail=\"{}\"", d.policy,
                 d.verdict.allowed ? "fail_open" : "fail_closed", to_string(verdict.error().code),
                 verdict.error().detail);
    for (const auto& l : limits) {
        metrics_.count_check(l.policy->name, d.verdict.allowed ? Outcome::degraded_allowed : Outcome::failed_closed,
                             false);
    }
    co_return d;
}

}  // namespace ratelimitd::service
