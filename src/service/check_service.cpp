// CheckService: validate -> resolve -> key -> store -> failure mode.
#include "ratelimitd/service/check_service.hpp"

#include "ratelimitd/check/key.hpp"
#include "ratelimitd/check/validate.hpp"
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/resolve.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::service {

namespace net = boost::asio;

namespace {

/// The parts of a request that end up in a key: tenant, scope and plan when given.
result<void> validate_key_parts(const check::CheckRequest& req) {
    if (auto ok = check::validate_tenant(req.tenant); !ok) return ok.error();
    if (req.scope) {
        if (auto ok = check::validate_scope(*req.scope); !ok) return ok.error();
    }
    if (req.plan && !check::is_valid_policy_name(*req.plan)) {
        return Problem{errc::invalid_request,
                       "plan: expected 1..64 bytes of A-Z, a-z, 0-9, '.', '_' or '-', got " + quote(req.plan->substr(0, 64))};
    }
    return {};
}

}  // namespace

std::vector<store::LimitCheck> store_checks(const policy::Policy& p, std::string_view prefix,
                                            std::string_view tenant, std::string_view scope,
                                            std::uint32_t cost) {
    std::vector<store::LimitCheck> out;
    if (p.windows.empty()) {
        out.push_back(store::LimitCheck{&p, check::make_key(prefix, p.key_name(), tenant, scope), cost});
        return out;
    }
    const std::string key_name = p.key_name();
    for (const auto& w : p.windows) {
        out.push_back(store::LimitCheck{
            &w, check::make_window_key(prefix, key_name, tenant, scope, format_duration(w.window)), cost});
    }
    return out;
}

net::awaitable<result<Decision>> CheckService::check(check::CheckRequest req) {
    // One snapshot for the whole check: a reload cannot change it half-way.
    auto registry = registry_.current();

    if (auto ok = validate_key_parts(req); !ok) co_return ok.error();
    if (auto ok = check::validate_cost(req.cost); !ok) co_return ok.error();

    auto resolved = policy::resolve(*registry, req);
    if (!resolved) co_return resolved.error();

    std::vector<LimitTarget> limits;
    if (resolved->route != nullptr && resolved->route->limits.size() > 1) {
        // A layered route: each of its limits spends this tenant's budget, decided as one.
        for (const auto& l : resolved->route->limits) limits.push_back({registry->find(l.policy), req.tenant});
    } else if (resolved->policy != nullptr) {
        limits.push_back({resolved->policy, req.tenant});
    }
    auto d = co_await check_limits(std::move(registry), std::move(limits), std::move(resolved->scope), req.cost,
                                   std::move(req.plan));
    if (d && !d->limited) d->tenant = std::move(req.tenant);
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
    auto limits = policy::limits_for(*t.registry, *resolved->policy, req.tenant, req.plan);
    if (!limits) return limits.error();
    t.policy = *limits;
    t.tenant = std::move(req.tenant);
    t.scope = std::move(resolved->scope);
    t.checks = store_checks(*t.policy, t.registry->prefix, t.tenant, t.scope, 1);
    return t;
}

net::awaitable<result<Decision>> CheckService::peek(check::CheckRequest req) {
    auto target = target_of(std::move(req));
    if (!target) co_return target.error();
    Decision d;
    d.policy = target->policy->name;
    d.tenant = std::move(target->tenant);
    d.scope = std::move(target->scope);
    d.verdict.allowed = true;
    // One peek per window: each is read-only, so there is nothing to keep atomic.
    for (auto& c : target->checks) {
        auto verdict = co_await store_.peek(*c.policy, std::move(c.key));
        if (!verdict) co_return verdict.error();
        d.verdict.allowed = d.verdict.allowed && verdict->allowed;
        for (auto& w : verdict->windows) d.verdict.windows.push_back(std::move(w));
    }
    co_return d;
}

net::awaitable<result<bool>> CheckService::reset(check::CheckRequest req) {
    auto target = target_of(std::move(req));
    if (!target) co_return target.error();
    spdlog::info("admin reset policy={} tenant={} scope={}", target->policy->key_name(), target->tenant,
                 target->scope);
    bool forgot = false;
    for (auto& c : target->checks) {
        auto one = co_await store_.reset(std::move(c.key));
        if (!one) co_return one.error();
        forgot = forgot || *one;
    }
    co_return forgot;
}

}  // namespace ratelimitd::service
