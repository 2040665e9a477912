// Road: a call planned on one registry snapshot, decided at once when it can be (no frame of
// its own), else handed to the one wait that applies.
#include "ratelimitd/road/road.hpp"

#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/core/log_value.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/algorithm.hpp"
#include "ratelimitd/policy/planner.hpp"
#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/road/hash_secret.hpp"

#include <openssl/sha.h>
#include <spdlog/spdlog.h>

#include <span>
#include <utility>

namespace ratelimitd::road {

namespace net = boost::asio;

namespace {

// What a refund's log and audit lines name, taken from the plan before deciding moves it.
NamedLimits named_limits(const policy::CheckPlan& plan) {
    NamedLimits out;
    for (const auto& limit : plan.limits) {
        out.push_back({limit.policy->name, limit.windows.empty() ? "" : Road::key_hash(limit.windows.front().key)});
    }
    return out;
}

// A planning result into the call: its plan, or its problem. True when it planned.
bool planned(Call& call, result<policy::CheckPlan>&& plan) {
    if (!plan) {
        call.problem = plan.error();
        return false;
    }
    call.plan = std::move(*plan);
    return true;
}

}  // namespace

Road::Road(service::CheckService& service, const std::optional<std::string>& env_secret) noexcept
    : registry_(service.registry_), service_(service), env_secret_(env_secret) {}

const std::optional<std::string>& Road::no_secret() noexcept {
    static const std::optional<std::string> none;
    return none;
}

std::string Road::key_hash(std::string_view key) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
    return to_hex(std::span<const unsigned char>(digest, 8));
}

void Road::log_refund(const Call& call, std::uint64_t units, std::string_view peer, std::string_view request_id) {
    const service::Decision& d = call.decision;
    if (call.problem || call.ask != Ask::report || !d.limited || d.degraded) return;
    for (const auto& limit : call.named) {
        spdlog::info("refund policy={} key_hash={} units={} peer={} request_id={}", limit.policy, limit.key_hash,
                     units, log_value(peer), request_id);
    }
}

net::awaitable<bool> Road::ready() const { return service_.store_.ready(); }

service::TopBoard* Road::top_board() const noexcept {
    return service_.top_ != nullptr ? &service_.top_->board() : nullptr;
}

service::CrossingSink* Road::crossing_sink() const noexcept { return service_.sink_; }

net::awaitable<void> Road::done() { co_return; }

// Not a coroutine: a call decided at once costs no frame here.
net::awaitable<void> Road::decide(Call& call) const {
    if (at_once(call)) return done();
    return later(call);
}

bool Road::at_once(Call& call) const {
    switch (call.ask) {
    case Ask::check: return plan_check(call);
    case Ask::auth: return plan_auth(call);
    case Ask::report: return plan_report(call);
    case Ask::release: return plan_release(call);
    case Ask::peek:
    case Ask::reset: return plan_state(call);
    case Ask::rls: return plan_rls(call);
    case Ask::envoy_peek:
    case Ask::envoy_reset: return plan_envoy_state(call);
    }
    call.problem = Problem{errc::invalid_request, "road: a call that asks nothing"};
    return true;
}

bool Road::try_now(Call& call) const {
    const auto now = call.now == std::chrono::steady_clock::time_point{} ? std::chrono::steady_clock::now() : call.now;
    return service_.decide_now(call.plan, now, call.decision);
}

bool Road::plan_check(Call& call) const {
    if (auto ok = policy::plan_into(registry_.current(), *call.check, call.plan); !ok) {
        call.problem = ok.error();
        call.plan = {};  // as planned(): no plan beside a problem
        return true;
    }
    return try_now(call);
}

bool Road::plan_auth(Call& call) const {
    // One snapshot for routes, identity sources, the hash secret and the deny status.
    auto registry = registry_.current();
    const policy::AuthRequest& asked = *call.auth;
    const policy::AuthRequest keyed{asked.method, asked.uri, asked.identity,
                                    effective_hash_secret(env_secret_, *registry)};
    call.deny_status = call.deny_status_asked.value_or(registry->auth.deny_status);
    auto plan = call.route_matched ? policy::plan_matched(std::move(registry), call.route, keyed)
                                   : policy::plan(std::move(registry), keyed);
    if (!planned(call, std::move(plan))) return true;
    return try_now(call);
}

bool Road::plan_report(Call& call) const {
    if (!planned(call, policy::plan_report(registry_.current(), *call.report))) return true;
    if (call.report->cost < 0) call.named = named_limits(call.plan);
    return try_now(call);
}

bool Road::plan_release(Call& call) const {
    if (!planned(call, policy::plan_state(registry_.current(), *call.check))) return true;
    const policy::Policy& p = *call.plan.limits.front().policy;
    if (policy::traits(p.algorithm).leases) return false;
    const auto keeps_leases = [](const policy::AlgorithmTraits& t) { return t.leases; };
    call.problem = Problem{errc::invalid_request, "policy: \"" + p.name + "\" uses " + policy::to_string(p.algorithm) +
                                                      "; only leases of algorithm " +
                                                      policy::algorithm_names_or(keeps_leases) + " can be released"};
    return true;
}

bool Road::plan_state(Call& call) const {
    return !planned(call, policy::plan_state(registry_.current(), *call.check));
}

bool Road::plan_rls(Call& call) const {
    auto plan = policy::plan(registry_.current(), *call.rls, registry_.envoy_keys());
    if (!plan) {
        call.problem = plan.error();
        return true;
    }
    *call.rls_plan = std::move(*plan);
    const policy::RlsPlan& rls = *call.rls_plan;
    const bool charges_denied = rls.check.registry->domains && rls.check.registry->domains->charge_denied &&
                                !rls.check.single_call;
    // A cost no window can ever admit is a denial decided without the store (and charged,
    // under envoy_denied_calls: charge, by rls_later).
    call.never_asked = rls.never_admitted;
    return rls.never_admitted && !charges_denied;
}

bool Road::plan_envoy_state(Call& call) const {
    auto registry = registry_.current();
    const std::string& domain = call.rls->domain;
    // A call to an unknown domain is answered OK (as envoyproxy/ratelimit does); an operator
    // naming one here made a typo, and is told so.
    if (!domain.empty() && (!registry->domains || registry->domains->find(domain) == nullptr)) {
        call.problem = Problem{errc::invalid_request, "domain: " + quote(domain) + " is not a configured domain"};
        return true;
    }
    // Planned as a ShouldRateLimit call of its own would plan it: same rule, same key.
    auto plan = policy::plan(std::move(registry), *call.rls, registry_.envoy_keys());
    if (!plan) {
        call.problem = plan.error();
        return true;
    }
    *call.rls_plan = std::move(*plan);
    const auto& d = call.rls_plan->descriptors.front();
    if (d.kind != policy::RlsDescriptorPlan::Kind::limited) return true;  // no state: nothing to ask
    const policy::PlannedLimit& limit = call.rls_plan->check.limits[d.limit];
    call.plan = policy::CheckPlan{};
    call.plan.registry = call.rls_plan->check.registry;
    call.plan.limits.push_back(limit);
    call.plan.limits.front().windows.resize(1);  // the rule's one window
    call.plan.tenant = limit.tenant;
    call.plan.scope = call.rls_plan->check.scope;
    if (call.ask == Ask::envoy_reset) call.named = {{d.label, key_hash(limit.windows.front().key)}};
    return false;
}

// The waits: what a call that could not be decided at once waits for, one coroutine per kind
// of wait, each holding only a reference to the caller's call.

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
        call.problem = d.error();
        co_return;
    }
    call.decision = std::move(*d);
}

net::awaitable<void> Road::peek_later(Call& call) const {
    auto state = co_await service_.peek(std::move(call.plan));
    if (!state) {
        call.problem = state.error();
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
        call.problem = forgot.error();
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
