// CheckService: a planned check -> the store -> shadow and failure modes -> a counted decision.
#include "ratelimitd/service/check_service.hpp"

#include "check_groups.hpp"

#include "ratelimitd/core/log_value.hpp"
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/policy/planner.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iterator>

namespace ratelimitd::service {

namespace net = boost::asio;

const check::WindowState* Decision::window_of(std::size_t limit) const {
    const check::WindowState* best = nullptr;
    const auto n = std::min(owner.size(), verdict.windows.size());
    for (std::size_t k = 0; k < n; ++k) {
        if (owner[k] != limit) continue;
        const auto& w = verdict.windows[k];
        if (!w.allowed) return &w;
        if (!best || w.remaining < best->remaining) best = &w;
    }
    return best;
}

namespace {
template <typename Text> void append_listed(Text& list, std::string_view item) {
    if (!list.empty()) list += ',';
    list += item;
}

/// The decision's names and mode before the store answers, written into `d` (a fresh one:
/// nothing moved): every limit's policy, each distinct tenant.
void open_into(const policy::CheckPlan& plan, Decision& d) {
    d.report = plan.mode == policy::Mode::report;
    d.scope = plan.scope;
    boost::container::small_vector<std::string_view, 4> tenants;  // distinct, in order
    for (const auto& l : plan.limits) {
        append_listed(d.policy, l.policy->name);
        d.fail_closed = d.fail_closed || l.fail_closed();
        if (std::find(tenants.begin(), tenants.end(), l.tenant) == tenants.end()) {
            tenants.push_back(l.tenant);
            append_listed(d.tenant, l.tenant);
        }
    }
}

/// The keys an admin reset forgets. A calendar window's planned key is the prefix its script
/// appends the period to (from the store's clock): its count is under the current period's
/// key, by this host's clock (the two agree but within a boundary's skew: docs/policies.md),
/// and denial caches, here and on every sidecar, hold the prefix a check was planned with.
std::vector<std::string> reset_keys(const policy::Policy& p, const std::string& key) {
    if (!p.calendar) return {key};
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    return {policy::calendar_period_key(key, calendar_period(*p.calendar, p.utc_offset_minutes, now_ms).start_ms),
            key};
}

/// A plan without limits: allowed, not limited (an unmatched auth subrequest is counted).
Decision not_limited(Decision d, const policy::CheckPlan& plan, Metrics& metrics) {
    if (plan.unmatched) metrics.count_auth_unmatched();
    d.policy = policy::no_policy;
    d.tenant = plan.tenant;
    d.limited = false;
    d.verdict.allowed = true;
    return d;
}

// An answer known without waiting, as ask_store hands it back.
net::awaitable<result<check::Verdict>> answered(result<check::Verdict> verdict) { co_return verdict; }

/// A store's answer moved into `out`: its failure, or nothing.
result<void> moved_into(result<check::Verdict>&& verdict, check::Verdict& out) {
    if (!verdict) return verdict.error();
    out = std::move(*verdict);
    return {};
}

/// open_into, as a value.
Decision opening(const policy::CheckPlan& plan) {
    Decision d;
    open_into(plan, d);
    return d;
}

}  // namespace

// The coroutines below keep in their frames only what lives across a co_await; the rest is
// done in plain functions. Frames come from the thread's FramePool (core/awaitable_frames.hpp),
// which keeps blocks of up to 4 KiB: a smaller frame is fewer bytes to touch, not a malloc less.

result<check::Verdict> CheckService::timed(std::chrono::steady_clock::time_point started,
                                           result<check::Verdict>&& verdict) {
    metrics_.observe_store_latency(std::chrono::steady_clock::now() - started);
    if (!verdict) metrics_.count_store_error(verdict.error().code);
    return std::move(verdict);
}

result<void> CheckService::timed(std::chrono::steady_clock::time_point started, result<void>&& asked) {
    metrics_.observe_store_latency(std::chrono::steady_clock::now() - started);
    if (!asked) metrics_.count_store_error(asked.error().code);
    return std::move(asked);
}

result<check::Verdict> CheckService::at_once(result<check::Verdict>&& verdict) {
    count_at_once(verdict ? std::nullopt : std::optional<errc>(verdict.error().code));
    return std::move(verdict);
}
void CheckService::count_at_once(std::optional<errc> failure) {
    // Well under a microsecond: timing it took two clock reads a check (docs/operations.md).
    metrics_.observe_store_latency(std::chrono::nanoseconds::zero());
    if (failure) metrics_.count_store_error(*failure);
}

// Not a coroutine: it takes what it needs from `checks` and hands back the store call's own
// awaitable, so no frame of its own holds them across the wait.
net::awaitable<result<check::Verdict>> CheckService::ask_store(LimitChecks& checks, bool declined_now) {
    const auto started = std::chrono::steady_clock::now();
    // A report always goes through apply_all: that is where the stores take its mode; so does
    // a check that asks without charging or charges whatever (its Part).
    if (!plain_single_check(checks)) {
        return ask_all(started, std::vector<store::LimitCheck>(std::make_move_iterator(checks.begin()),
                                                               std::make_move_iterator(checks.end())));
    }
    // One window of one limit is an ordinary check (and keeps what the store does for those).
    // Decided at once when the store can (embedded, a cached denial): no store frame, no resume.
    store::LimitCheck& c = checks.front();
    if (declined_now) return ask_one(started, *c.policy, std::move(c.key), c.cost);
    if (auto now = store_.try_apply_now(*c.policy, c.key, c.cost, started)) {
        return answered(at_once(std::move(*now)));
    }
    return ask_one(started, *c.policy, std::move(c.key), c.cost);
}

net::awaitable<result<check::Verdict>> CheckService::ask_one(std::chrono::steady_clock::time_point started,
                                                             const policy::Policy& p, std::string key,
                                                             std::uint32_t cost) {
    // Only after try_apply_now declined (here or in decide_now): the store need not look again.
    co_return timed(started, co_await store_.apply_declined(p, std::move(key), cost));
}

net::awaitable<result<void>> CheckService::ask_declined_into(store::LimitCheck& c, check::Verdict& out) {
    const auto started = std::chrono::steady_clock::now();
    co_return timed(started, co_await store_.apply_declined_into(*c.policy, std::move(c.key), c.cost, out));
}

net::awaitable<result<check::Verdict>> CheckService::ask_all(std::chrono::steady_clock::time_point started,
                                                             std::vector<store::LimitCheck> checks) {
    co_return timed(started, co_await store_.apply_all(std::move(checks)));
}

// Reads no clock: the store and the heavy hitters take the request's instant, `now`.
// Fills the caller's decision in place: no decision is moved on the way out.
bool CheckService::decide_now(policy::CheckPlan& plan, std::chrono::steady_clock::time_point now, Decision& d) {
    if (plan.limits.empty()) {
        d = not_limited(opening(plan), plan, metrics_);
        return true;
    }
    std::uint32_t cost = 0;
    const policy::KeyedWindow* w = lone_plain_window(plan, cost);
    if (w == nullptr) return false;
    // The store writes its verdict into the decision's own: none is built and moved on the way.
    const auto answer = store_.try_apply_now_into(*w->limit, w->key, cost, now, d.verdict);
    if (!answer) return false;
    // decide()'s answer (one enforced group); named and counted in place.
    open_into(plan, d);
    count_at_once(*answer ? std::nullopt : std::optional<errc>(answer->error().code));
    if (!*answer) {
        d = degrade(std::move(d), plan, plan.limits.front().fail_closed(), answer->error());
        return true;
    }
    d.owner.push_back(0);
    settle(d, plan, &now);
    return true;
}

net::awaitable<Decision> CheckService::decide(policy::CheckPlan plan) {
    Decision d;
    co_await decide_into(plan, d);
    co_return d;
}

net::awaitable<void> CheckService::decide_into(policy::CheckPlan& plan, Decision& d, bool declined_now) {
    d = opening(plan);
    if (plan.limits.empty()) {
        d = not_limited(std::move(d), plan, metrics_);
        co_return;
    }
    if (plan.single_call) {
        co_await decide_single_call(plan, d);
        co_return;
    }
    // Enforced limits first: when they deny, the shadow ones are neither charged nor asked
    // (a denied request counts nowhere). Shadow limits are decided apart, so that their
    // would-be denial never keeps the enforced ones from being charged.
    // decide_now asked the store only about a lone plain window (which is then the one check).
    std::uint32_t lone_cost = 0;
    const bool declined = declined_now && lone_plain_window(plan, lone_cost) != nullptr;
    CheckGroup enforced = checks_of(plan, false);
    if (!enforced.checks.empty()) {
        // A lone check try_apply_now declined: the store writes its verdict into the decision's.
        result<void> asked;
        if (declined && plain_single_check(enforced.checks)) {
            asked = co_await ask_declined_into(enforced.checks.front(), d.verdict);
        } else {
            asked = moved_into(co_await ask_store(enforced.checks, declined), d.verdict);
        }
        if (!asked) {
            d = degrade(std::move(d), plan, enforced.fail_closed, asked.error());
            co_return;
        }
        d.owner = std::move(enforced.owner);
        if (!d.verdict.allowed) {
            settle(d, plan);
            co_return;
        }
    }
    d.verdict.allowed = true;
    // Its own coroutine: the shadow group and verdict need no room in this frame.
    if (has_shadow(plan) && !co_await ask_shadow(plan, d)) co_return;
    settle(d, plan);
}

net::awaitable<bool> CheckService::ask_shadow(policy::CheckPlan& plan, Decision& d) {
    CheckGroup shadow = checks_of(plan, true);
    auto verdict = co_await ask_store(shadow.checks);
    if (!verdict) {
        // Shadow limits never deny: a failure of theirs allows, degraded only when nothing
        // enforced answered.
        if (d.owner.empty()) {
            d = degrade(std::move(d), plan, false, verdict.error());
            co_return false;
        }
        spdlog::warn("store failure for shadow policies policy={} detail={}", d.policy,
                     log_value(verdict.error().detail));
        co_return true;
    }
    d.shadow_denied = !verdict->allowed;
    for (auto& w : verdict->windows) {
        w.delay_ms = 0;  // a shadow limit never holds a request: it only counts
        d.verdict.windows.push_back(std::move(w));
    }
    d.owner.insert(d.owner.end(), shadow.owner.begin(), shadow.owner.end());
    co_return true;
}

net::awaitable<void> CheckService::decide_single_call(policy::CheckPlan& plan, Decision& d) {
    CheckGroup all;
    for (std::size_t i = 0; i < plan.limits.size(); ++i) {
        const policy::PlannedLimit& l = plan.limits[i];
        all.add(plan.limits[i], i, l.cost != 0 || l.check_only ? l.cost : plan.cost, plan);
    }
    bool fail_closed = false;
    for (const auto& l : plan.limits) fail_closed = fail_closed || (!l.shadow() && l.fail_closed());
    auto verdict = co_await ask_store(all.checks);
    if (!verdict) {
        d = degrade(std::move(d), plan, fail_closed, verdict.error());
        co_return;
    }
    d.verdict = std::move(*verdict);
    d.owner = std::move(all.owner);
    // Only enforced limits deny; a shadow one over its limit is counted as such.
    d.verdict.allowed = true;
    for (std::size_t k = 0; k < d.verdict.windows.size() && k < d.owner.size(); ++k) {
        check::WindowState& w = d.verdict.windows[k];
        if (plan.limits[d.owner[k]].shadow()) {
            w.delay_ms = 0;  // a shadow limit never holds a request: it only counts
            d.shadow_denied = d.shadow_denied || !w.allowed;
        } else if (!w.allowed) {
            d.verdict.allowed = false;
        }
    }
    settle(d, plan);
}

void CheckService::settle(const Decision& d, const policy::CheckPlan& plan,
                          const std::chrono::steady_clock::time_point* now) {
    count(d, plan, d.owner, now);
    offer_crossings(d, plan);
}

namespace {

// What the caller answers a store failure, as its log line names it: the limits' own
// on_store_error, or the Envoy door's envoy_store_error over them (unavailable: a gRPC error,
// neither open nor closed; Envoy's failure_mode_deny decides).
const char* store_failure_outcome(policy::RlsStoreError answer, bool allowed) {
    switch (answer) {
    case policy::RlsStoreError::unavailable: return "unavailable";
    case policy::RlsStoreError::allow: return "fail_open";
    case policy::RlsStoreError::deny: return "fail_closed";
    case policy::RlsStoreError::on_store_error: break;
    }
    return allowed ? "fail_open" : "fail_closed";
}

}  // namespace

Decision CheckService::degrade(Decision d, const policy::CheckPlan& plan, bool fail_closed, const Problem& why) {
    const policy::PlannedLimits& limits = plan.limits;
    // The store failed: the policies' on_store_error decides which way, and the caller is
    // told it degraded.
    d.degraded = true;
    d.store_error = why.code;
    d.verdict = {};
    d.verdict.allowed = !fail_closed;
    spdlog::warn("store failure policy={} outcome={} error={} detail={}", d.policy,
                 store_failure_outcome(plan.store_failure, d.verdict.allowed), to_string(why.code),
                 log_value(why.detail));
    for (const auto& l : limits) {
        metrics_.count_check(l.policy->name, d.verdict.allowed ? Outcome::degraded_allowed : Outcome::failed_closed,
                             false);
    }
    return d;
}

void CheckService::count(const Decision& d, const policy::CheckPlan& plan, const Owners& owner,
                         const std::chrono::steady_clock::time_point* now) {
    const policy::PlannedLimits& limits = plan.limits;
    const std::uint32_t plan_cost = plan.cost;
    if (d.report) {
        // A report is no check: ratelimitd_checks_total counts checks. A refund the store
        // took is counted per limit (its log line is the door's, which knows the caller).
        if (plan.report_cost < 0) {
            const auto units = static_cast<std::uint64_t>(-plan.report_cost);
            for (const auto& l : limits) metrics_.count_refund(l.policy->name, units);
        }
        return;
    }
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
        const std::uint32_t cost = limits[i].check_only ? 0 : limits[i].cost != 0 ? limits[i].cost : plan_cost;
        metrics_.count_verdict(p.name, outcome, allowed && near, cost, d.verdict.from_denial_cache);
        if (top_ != nullptr && outcome != Outcome::shadow_denied) {
            // Denied checks count one each; admitted ones count their units. At the check's
            // instant when it has one, else the clock is read only for a check that is counted.
            const TopBy by = allowed ? TopBy::admitted : TopBy::denied;
            const std::uint64_t amount = allowed ? cost : 1;
            if (now != nullptr) {
                top_->record(p.name, limits[i].tenant, by, amount, *now);
            } else {
                top_->record(p.name, limits[i].tenant, by, amount);
            }
        }
    }
}

namespace {

/// The plan whose limits `limit` spends: the tenant's (`tenants.T.plan`), else the plan a
/// version of the policy belongs to; "" for none (the policy's own limits).
std::string plan_name(const policy::CheckPlan& plan, const policy::PlannedLimit& limit) {
    if (plan.registry) {
        if (auto it = plan.registry->tenants.find(limit.tenant); it != plan.registry->tenants.end() && it->second.plan) {
            return *it->second.plan;
        }
    }
    const std::string& own = limit.policy->plan;
    return own == policy::tenant_override_label ? std::string() : own;
}

/// What an event says of the window `w` that crossed, beside the threshold or the debt.
void describe_window(service::Crossing& c, const check::WindowState& w, std::string plan) {
    c.plan = std::move(plan);
    c.window_name = w.policy;
    c.window_s = w.window_s;
    c.crossed_at_ms = static_cast<std::int64_t>(w.crossed_at_s) * 1000;
}

}  // namespace

void CheckService::offer_crossings(const Decision& d, const policy::CheckPlan& plan) const {
    if (sink_ == nullptr) return;
    for (std::size_t k = 0; k < d.verdict.windows.size() && k < d.owner.size(); ++k) {
        const check::WindowState& w = d.verdict.windows[k];
        if (w.crossed == 0 && w.debt_passed == 0) continue;
        const policy::PlannedLimit& limit = plan.limits[d.owner[k]];
        const auto& rule = limit.policy->notify;
        if (!rule) continue;
        const std::string plan_of_tenant = plan_name(plan, limit);
        // An aligned Envoy rule's key names its window; its counter's TTL runs from the first charge.
        const std::int64_t window_end_ms = limit.window_end_s ? limit.window_end_s * 1000LL : w.window_end_ms;
        if (w.debt_passed > 0) {
            Crossing c{rule, 0, limit.tenant.str(), plan.scope, w.limit, 0, window_end_ms};
            c.debt = w.debt_passed;
            describe_window(c, w, plan_of_tenant);
            sink_->offer(std::move(c));
        }
        for (std::size_t bit = 0; bit < rule->at.size() && bit < policy::max_notify_thresholds; ++bit) {
            if ((w.crossed & (1u << bit)) == 0) continue;
            Crossing c{rule, rule->at[bit], limit.tenant.str(), plan.scope, w.limit,
                       std::max<std::int64_t>(0, w.limit - w.remaining), window_end_ms};
            describe_window(c, w, plan_of_tenant);
            sink_->offer(std::move(c));
        }
    }
}

net::awaitable<result<Decision>> CheckService::peek(policy::CheckPlan target) {
    const policy::PlannedLimit& limit = target.limits.front();
    Decision d;
    d.policy = limit.policy->name;
    d.tenant = limit.tenant;
    d.scope = target.scope;
    d.verdict.allowed = true;
    // One peek per window: each is read-only, so there is nothing to keep atomic.
    for (const auto& w : limit.windows) {
        auto verdict = co_await store_.peek(*w.limit, w.key);
        if (!verdict) co_return verdict.error();
        d.verdict.allowed = d.verdict.allowed && verdict->allowed;
        for (auto& one : verdict->windows) d.verdict.windows.push_back(std::move(one));
    }
    co_return d;
}

net::awaitable<result<bool>> CheckService::reset(policy::CheckPlan target) {
    const policy::PlannedLimit& limit = target.limits.front();
    bool forgot = false;
    for (const auto& w : limit.windows) {
        for (auto& key : reset_keys(*w.limit, w.key)) {
            auto one = co_await store_.reset(std::move(key));
            if (!one) co_return one.error();
            forgot = forgot || *one;
        }
    }
    co_return forgot;
}

net::awaitable<result<Decision>> CheckService::release(policy::CheckPlan target, std::string lease) {
    const policy::PlannedLimit& limit = target.limits.front();
    auto verdict = co_await store_.release(*limit.policy, limit.windows.front().key, std::move(lease));
    if (!verdict) co_return verdict.error();
    Decision d;
    d.policy = limit.policy->name;
    d.tenant = limit.tenant;
    d.scope = target.scope;
    d.verdict = std::move(*verdict);
    co_return d;
}

}  // namespace ratelimitd::service
