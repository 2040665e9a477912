// Road's waits: what a call that could not be decided at once waits for, one coroutine per
// kind of wait, each holding only a reference to the caller's call.
#include "ratelimitd/road/road.hpp"

#include "ratelimitd/policy/rls_domain.hpp"

#include <spdlog/spdlog.h>

#include <utility>

namespace ratelimitd::road {

namespace net = boost::asio;

namespace {

// envoy_denied_calls: charge, for a call not decided in one store call (single_call).
bool charges_denied(const policy::RlsPlan& plan) {
    return plan.check.registry->domains && plan.check.registry->domains->charge_denied && !plan.check.single_call;
}

// A degraded rls decision answered as envoy_store_error says.
void answer_store_error(policy::RlsStoreError mode, Call& call) {
    service::Decision& d = call.decision;
    switch (mode) {
    case policy::RlsStoreError::on_store_error: return;  // degrade() applied each limit's
    case policy::RlsStoreError::allow: d.verdict.allowed = true; return;
    case policy::RlsStoreError::deny: d.verdict.allowed = false; return;
    case policy::RlsStoreError::unavailable:
        // envoyproxy/ratelimit answers a store error with a gRPC error: Envoy's
        // failure_mode_deny (Envoy Gateway's failClosed) then decides, not this process.
        call.problem = Problem{d.store_error, "rate limit store unavailable"};
        return;
    }
}

}  // namespace

// Not a coroutine: it hands back the one wait that applies, so a check waits in the service's
// frame only (the caller's, or Road::wait's, holds the call).
net::awaitable<void> Road::later(Call& call) const {
    switch (call.ask) {
    // decide_now declined this plan in at_once: its one store check skips a second lookup.
    case Ask::check:
    case Ask::auth:
    case Ask::report: return service_.decide_into(call.plan, call.decision, true);
    case Ask::release: return release_later(call);
    case Ask::peek:
    case Ask::envoy_peek: return peek_later(call);
    case Ask::reset:
    case Ask::envoy_reset: return reset_later(call);
    case Ask::rls: return rls_later(call);
    }
    return done();
}

net::awaitable<void> Road::release_later(Call& call) const {
    auto d = co_await service_.release(std::move(call.plan), std::string(call.lease));
    if (!d) {
        call.problem = std::move(d.error());
        co_return;
    }
    call.decision = std::move(*d);
}

net::awaitable<void> Road::peek_later(Call& call) const {
    auto state = co_await service_.peek(std::move(call.plan));
    if (!state) {
        call.problem = std::move(state.error());
        co_return;
    }
    call.decision = std::move(*state);
}

net::awaitable<void> Road::reset_later(Call& call) const {
    const policy::PlannedLimit& limit = call.plan.limits.front();
    if (call.ask == Ask::envoy_reset) {
        spdlog::info("admin reset envoy rule={}", call.named.front().policy);
    } else {
        spdlog::info("admin reset policy={} tenant={} scope={}", limit.policy->key_name(), limit.tenant,
                     call.plan.scope);
    }
    auto forgot = co_await service_.reset(std::move(call.plan));
    if (!forgot) {
        call.problem = std::move(forgot.error());
        co_return;
    }
    call.forgot = *forgot;
}

net::awaitable<void> Road::rls_later(Call& call) const {
    const policy::RlsPlan& rls = *call.rls_plan;
    // envoyproxy/ratelimit's accounting (single_call) charges a denied call in its one call.
    const bool charge = charges_denied(rls);
    if (rls.never_admitted) {
        if (charge) co_await charge_denied(rls);
        co_return;
    }
    // A copy: the answer reads every descriptor's limit after the decision.
    call.plan = rls.check;
    co_await service_.decide_into(call.plan, call.decision);
    if (call.decision.degraded) {
        answer_store_error(registry_.envoy_keys().store_error, call);
        co_return;
    }
    if (charge && !call.decision.verdict.allowed) co_await charge_denied(rls);
}

net::awaitable<void> Road::charge_denied(const policy::RlsPlan& plan) const {
    // envoy_denied_calls: charge. The call was denied and charged nothing: charge each
    // descriptor's cost as a report (without asking, into debt up to the limit's bound), so
    // what was spent (the tokens of a streamed response) is metered past the limit. Limits
    // asked without charging (hits_addend 0) spend nothing here either.
    policy::CheckPlan report{plan.check.registry, {}, plan.check.tenant, plan.check.scope, 1, policy::Mode::report, 0, false};
    for (const auto& l : plan.check.limits) {
        if (l.check_only) continue;
        report.limits.push_back(l);
        if (report.limits.back().cost == 0) report.limits.back().cost = plan.check.cost;
    }
    if (report.limits.empty()) co_return;
    service::Decision charged;
    co_await service_.decide_into(report, charged);  // decide()'s frame would hold both again
    if (charged.degraded) spdlog::warn("envoy_denied_calls: charge: the store failed, the denied call is not charged");
}

}  // namespace ratelimitd::road
