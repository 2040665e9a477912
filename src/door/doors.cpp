// Doors: each door's request value -> a plan on one registry snapshot -> a decision.
#include "ratelimitd/door/doors.hpp"

#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/core/log_value.hpp"
#include "ratelimitd/door/hash_secret.hpp"
#include "ratelimitd/policy/algorithm.hpp"
#include "ratelimitd/policy/planner.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <openssl/sha.h>
#include <spdlog/spdlog.h>

#include <utility>
#include <vector>

namespace ratelimitd::door {

namespace net = boost::asio;

namespace {

// A store key named in a log line: the first 16 hex digits of its SHA-256, enough to match
// lines about one key, without writing the tenant's key out.
std::string key_hash(std::string_view key) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
    return to_hex(std::span<const unsigned char>(digest, 8));
}

// What a refund's log line names, taken from the plan before deciding moves it.
RefundedLimits refunded_limits(const policy::CheckPlan& plan) {
    RefundedLimits out;
    for (const auto& limit : plan.limits) {
        out.push_back({limit.policy->name, limit.windows.empty() ? "" : key_hash(limit.windows.front().key)});
    }
    return out;
}

// A door's answer known without asking the store, as its awaitable hands it back.
net::awaitable<result<service::Decision>> refused(Problem why) { co_return why; }

}  // namespace

std::optional<result<service::Decision>> Doors::check_now(const check::CheckRequest& req, policy::CheckPlan& plan,
                                                          std::chrono::steady_clock::time_point now) const {
    auto planned = policy::plan(registry_.current(), req);
    if (!planned) return std::move(planned.error());
    plan = std::move(*planned);
    if (auto decided = service_.decide_now(plan, now)) return std::move(*decided);
    return std::nullopt;
}

std::optional<result<AuthOutcome>> Doors::auth_now(const AuthRequest& req, policy::CheckPlan& plan,
                                                   int& deny_status, std::chrono::steady_clock::time_point now) const {
    // One snapshot for routes, identity sources, the hash secret and the deny status.
    const auto registry = registry_.current();
    auto planned = policy::plan(registry, policy::AuthRequest{req.method, req.uri, req.identity,
                                                              effective_hash_secret(req.env_secret, *registry)});
    if (!planned) return std::move(planned.error());
    deny_status = req.deny_status.value_or(registry->auth.deny_status);
    plan = std::move(*planned);
    if (auto decided = service_.decide_now(plan, now)) return AuthOutcome{std::move(*decided), deny_status};
    return std::nullopt;
}

std::optional<Problem> Doors::report_plan(const policy::ReportRequest& req, policy::CheckPlan& plan,
                                          RefundedLimits& refunded) const {
    auto planned = policy::plan_report(registry_.current(), req);
    if (!planned) return std::move(planned.error());
    plan = std::move(*planned);
    refunded = req.cost < 0 ? refunded_limits(plan) : RefundedLimits{};
    return std::nullopt;
}

void Doors::log_refund(const service::Decision& decision, std::uint64_t units, const RefundedLimits& refunded,
                       const Caller& caller) {
    if (!decision.limited || decision.degraded) return;
    for (const auto& limit : refunded) {
        spdlog::info("refund policy={} key_hash={} units={} peer={} request_id={}", limit.policy, limit.key_hash,
                     units, log_value(caller.peer), caller.request_id);
    }
}

// Not a coroutine: it hands back the service's own awaitable, which owns the plan and the
// lease, so no frame of the door holds a second copy of them across the wait.
net::awaitable<result<service::Decision>> Doors::release(ReleaseRequest req) const {
    auto target = policy::plan_state(registry_.current(), req.check);
    if (!target) return refused(std::move(target.error()));
    const policy::Policy& p = *target->limits.front().policy;
    if (!policy::traits(p.algorithm).leases) {
        const auto keeps_leases = [](const policy::AlgorithmTraits& t) { return t.leases; };
        return refused(Problem{errc::invalid_request, "policy: \"" + p.name + "\" uses " +
                                                          policy::to_string(p.algorithm) + "; only leases of algorithm " +
                                                          policy::algorithm_names_or(keeps_leases) + " can be released"});
    }
    return service_.release(std::move(*target), std::move(req.lease));
}

void Doors::answer_store_error(policy::RlsStoreError mode, result<RlsOutcome>& outcome) {
    service::Decision& d = outcome->decision;
    switch (mode) {
    case policy::RlsStoreError::on_store_error: return;  // degrade() applied each limit's
    case policy::RlsStoreError::allow: d.verdict.allowed = true; return;
    case policy::RlsStoreError::deny: d.verdict.allowed = false; return;
    case policy::RlsStoreError::unavailable:
        // envoyproxy/ratelimit answers a store error with a gRPC error: Envoy's
        // failure_mode_deny (Envoy Gateway's failClosed) then decides, not this process.
        outcome = Problem{d.store_error, "rate limit store unavailable"};
        return;
    }
}

result<RlsOutcome> Doors::rls_plan(const policy::RlsRequest& req) const {
    auto plan = policy::plan(registry_.current(), req, registry_.envoy_keys());
    if (!plan) return std::move(plan.error());
    return RlsOutcome{std::move(*plan), {}};
}

net::awaitable<void> Doors::rls(const policy::RlsRequest& req, result<RlsOutcome>& outcome) const {
    outcome = rls_plan(req);
    if (!outcome) co_return;
    RlsOutcome& out = *outcome;
    // envoyproxy/ratelimit's accounting (single_call) charges a denied call in its one call.
    const bool charge_denied = out.plan.check.registry->domains && out.plan.check.registry->domains->charge_denied &&
                               !out.plan.check.single_call;
    // A cost no window can ever admit is a denial decided without the store.
    if (out.plan.never_admitted) {
        if (charge_denied) co_await charge(out.plan);
        co_return;
    }
    // A copy: the answer reads every descriptor's limit after the decision.
    policy::CheckPlan check = out.plan.check;
    co_await service_.decide_into(check, out.decision);
    if (out.decision.degraded) {
        answer_store_error(registry_.envoy_keys().store_error, outcome);
        co_return;
    }
    if (charge_denied && !out.decision.verdict.allowed && !out.decision.degraded) co_await charge(out.plan);
}

net::awaitable<void> Doors::charge(const policy::RlsPlan& plan) const {
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

}  // namespace ratelimitd::door
