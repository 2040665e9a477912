// CheckService: validate -> resolve -> key -> store -> failure mode.
#include "ratelimitd/service/check_service.hpp"

#include "ratelimitd/check/key.hpp"
#include "ratelimitd/check/validate.hpp"
#include "ratelimitd/policy/resolve.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::service {

namespace net = boost::asio;

net::awaitable<result<Decision>> CheckService::check(check::CheckRequest req) {
    // One snapshot for the whole check: a reload cannot change it half-way.
    const auto registry = registry_.current();

    if (auto ok = check::validate_tenant(req.tenant); !ok) co_return ok.error();
    if (req.scope) {
        if (auto ok = check::validate_scope(*req.scope); !ok) co_return ok.error();
    }
    if (auto ok = check::validate_cost(req.cost); !ok) co_return ok.error();

    auto resolved = policy::resolve(*registry, req);
    if (!resolved) co_return resolved.error();

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
    auto verdict = co_await store_.apply(p, std::move(key), req.cost);
    if (verdict) {
        d.verdict = std::move(*verdict);
        co_return d;
    }

    // The store failed: the policy decides which way, and the caller is told it degraded.
    d.degraded = true;
    d.store_error = verdict.error().code;
    d.verdict.allowed = p.on_store_error == policy::OnStoreError::allow;
    spdlog::warn("store failure policy={} outcome={} error={} detail=\"{}\"", p.name,
                 d.verdict.allowed ? "fail_open" : "fail_closed",
                 to_string(verdict.error().code), verdict.error().detail);
    co_return d;
}

}  // namespace ratelimitd::service
