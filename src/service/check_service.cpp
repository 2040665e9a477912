// CheckService: validate -> resolve -> key -> store -> failure mode.
#include "ratelimitd/service/check_service.hpp"

#include "ratelimitd/check/key.hpp"
#include "ratelimitd/check/validate.hpp"
#include "ratelimitd/policy/resolve.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::service {

namespace net = boost::asio;

namespace {

/// The parts of a request that end up in a key: tenant, and scope when given.
result<void> validate_key_parts(const check::CheckRequest& req) {
    if (auto ok = check::validate_tenant(req.tenant); !ok) return ok.error();
    if (req.scope) return check::validate_scope(*req.scope);
    return {};
}

}  // namespace

net::awaitable<result<Decision>> CheckService::check(check::CheckRequest req) {
    // One snapshot for the whole check: a reload cannot change it half-way.
    const auto registry = registry_.current();

    if (auto ok = validate_key_parts(req); !ok) co_return ok.error();
    if (auto ok = check::validate_cost(req.cost); !ok) co_return ok.error();

    auto resolved = policy::resolve(*registry, req);
    if (!resolved) co_return resolved.error();

    if (resolved->route != nullptr && resolved->route->limits.size() > 1) {
        // A layered route: each of its limits spends this tenant's budget, decided as one.
        std::vector<LimitTarget> limits;
        for (const auto& l : resolved->route->limits) limits.push_back({registry->find(l.policy), req.tenant});
        co_return co_await check_limits(registry, std::move(limits), std::move(resolved->scope), req.cost);
    }

    Decision d;
    d.tenant = std::move(req.tenant);
    d.scope = std::move(resolved->scope);
    if (resolved->policy == nullptr) {
        d.policy = policy::no_policy;
        d.limited = false;
        d.verdict.allowed = true;
        co_return d;
    }
    const policy::Policy& p = *resolved->policy;
    d.policy = p.name;
    if (req.cost > p.max_cost()) {
        co_return Problem{errc::invalid_cost,
                          "cost: " + std::to_string(req.cost) + " is more than policy \"" +
                              p.name + "\" can ever admit (" + std::to_string(p.max_cost()) +
                              ")"};
    }

    auto key = check::make_key(registry->prefix, p.name, d.tenant, d.scope);
    const auto started = std::chrono::steady_clock::now();
    auto verdict = co_await store_.apply(p, std::move(key), req.cost);
    metrics_.observe_store_latency(std::chrono::steady_clock::now() - started);
    if (verdict) {
        d.verdict = std::move(*verdict);
        count(d, p);
        co_return d;
    }
    metrics_.count_store_error(verdict.error().code);

    // The store failed: the policy decides which way, and the caller is told it degraded.
    d.degraded = true;
    d.store_error = verdict.error().code;
    d.verdict.allowed = p.on_store_error == policy::OnStoreError::allow;
    spdlog::warn("store failure policy={} outcome={} error={} detail=\"{}\"", p.name,
                 d.verdict.allowed ? "fail_open" : "fail_closed",
                 to_string(verdict.error().code), verdict.error().detail);
    count(d, p);
    co_return d;
}

result<CheckService::Target> CheckService::target_of(check::CheckRequest req) const {
    Target t;
    t.registry = registry_.current();
    if (auto ok = validate_key_parts(req); !ok) return ok.error();
    auto resolved = policy::resolve(*t.registry, req);
    if (!resolved) return resolved.error();
    if (resolved->policy == nullptr) {
        return Problem{errc::unknown_policy, "policy: the request resolves to \"none\", which keeps no state"};
    }
    t.policy = resolved->policy;
    t.tenant = std::move(req.tenant);
    t.scope = std::move(resolved->scope);
    t.key = check::make_key(t.registry->prefix, t.policy->name, t.tenant, t.scope);
    return t;
}

net::awaitable<result<Decision>> CheckService::peek(check::CheckRequest req) {
    auto target = target_of(std::move(req));
    if (!target) co_return target.error();
    auto verdict = co_await store_.peek(*target->policy, target->key);
    if (!verdict) co_return verdict.error();
    Decision d;
    d.policy = target->policy->name;
    d.tenant = std::move(target->tenant);
    d.scope = std::move(target->scope);
    d.verdict = std::move(*verdict);
    co_return d;
}

net::awaitable<result<bool>> CheckService::reset(check::CheckRequest req) {
    auto target = target_of(std::move(req));
    if (!target) co_return target.error();
    spdlog::info("admin reset policy={} tenant={} scope={}", target->policy->name, target->tenant, target->scope);
    co_return co_await store_.reset(target->key);
}

void CheckService::count(const Decision& d, const policy::Policy& p) {
    if (d.degraded) {
        metrics_.count_check(p.name, d.verdict.allowed ? Outcome::degraded_allowed : Outcome::failed_closed, false);
        return;
    }
    const auto& w = d.verdict.reported();
    // "Near the limit": an allowed check that left less than 10 % of the quota.
    const bool near = d.verdict.allowed && w.remaining * 10 < w.limit;
    metrics_.count_check(p.name, d.verdict.allowed ? Outcome::allowed : Outcome::denied, near);
}

}  // namespace ratelimitd::service
