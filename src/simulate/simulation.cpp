// Simulation: each line an auth call on the road (road::Ask::auth, its route matched by the
// route cache), with the logged client address as the peer and the logged headers as the
// request's, on an embedded store whose clock is the log's.
#include "ratelimitd/simulate/simulation.hpp"

#include "ratelimitd/policy/planner.hpp"

#include <strings.h>

namespace ratelimitd::simulate {
namespace {

// The embedded store drops expired keys when a shard is full; a replay sweeps them itself (as
// the server's sweeper does on a timer), so memory follows live tenants, not lines.
constexpr std::int64_t sweep_every_ms = 60'000;

std::vector<std::string> policy_names(const policy::Registry& reg) {
    std::vector<std::string> out;
    for (const auto& [name, p] : reg.policies) out.push_back(name);
    return out;
}

}  // namespace

Simulation::Simulation(std::shared_ptr<const policy::Registry> registry, const std::optional<std::string>& env_secret,
                       std::int64_t tolerance_ms)
    : registry_(std::move(registry)),
      handle_(registry_),
      store_(clock_),
      service_(handle_, store_, metrics_),
      env_secret_(env_secret),
      road_(service_, env_secret_),
      tolerance_ms_(tolerance_ms),
      routes_(*registry_),
      tally_(policy_names(*registry_)) {
    for (const auto& [name, p] : registry_->policies) policies_.push_back(&p);
    headers_ = [this](std::string_view name) {
        policy::HeaderList values;
        for (const auto& h : current_->headers) {
            if (h.name.size() == name.size() && ::strncasecmp(h.name.data(), name.data(), name.size()) == 0) {
                values.push_back(h.value);
            }
        }
        return values;
    };
}

std::size_t Simulation::policy_index(const policy::Policy* p) {
    for (std::size_t i = 0; i < policies_.size(); ++i) {
        if (policies_[i] == p) return i;
    }
    // A plan or tenant override gives a copy of the policy: find it by name.
    for (std::size_t i = 0; i < policies_.size(); ++i) {
        if (policies_[i]->name == p->name) return i;
    }
    return 0;
}

boost::asio::awaitable<LineVerdict> Simulation::decide(const LogRequest& req) {
    if (clock_.advance_to(req.time_ms) > tolerance_ms_) ++late_;
    // At most once a minute of log time, and only after as many lines as there were keys left
    // by the last sweep: each line pays for at most one key visited, and the store holds at
    // most about twice its live keys (plus one minute's new ones).
    if (++decided_since_sweep_ >= keys_after_sweep_ && clock_.now_ms() >= next_sweep_ms_) {
        store_.sweep_expired();
        keys_after_sweep_ = store_.key_count();
        decided_since_sweep_ = 0;
        next_sweep_ms_ = clock_.now_ms() + sweep_every_ms;
    }
    tally_.request(req.time_ms);
    current_ = &req;
    const policy::IdentityInput identity{headers_, req.client};
    const policy::AuthRequest auth{req.method, req.uri, identity, {}};  // the road keys hashed identities
    road::Call call(road::Ask::auth);
    call.auth = &auth;
    call.route = routes_.match(req.method, req.uri);
    call.route_matched = true;
    co_await road_.decide(call);
    current_ = nullptr;
    // /v1/auth plans cost 1, which every policy admits: planning does not fail on a request.
    if (call.problem || call.plan.limits.empty()) {
        tally_.decided(false, false);
        co_return LineVerdict{};
    }
    const service::Decision& d = call.decision;
    // Per limit, by the window that speaks for it (denying when any of its windows denied): a
    // limit not asked (a shadow one after an enforced denial) has none and is not counted.
    // Deciding moved the plan's keys out; its policies and tenants stay.
    bool limited = false;
    for (std::size_t i = 0; i < call.plan.limits.size(); ++i) {
        const policy::PlannedLimit& limit = call.plan.limits[i];
        if (const check::WindowState* w = d.window_of(i)) {
            limited = true;
            tally_.checked(policy_index(limit.policy), limit.tenant, !w->allowed, req.time_ms);
            if (w->allowed && w->delay_ms > 0) tally_.delayed(policy_index(limit.policy), w->delay_ms);
        }
    }
    tally_.decided(limited, !d.verdict.allowed);
    co_return LineVerdict{true, d.verdict.allowed};
}

Summary Simulation::summary() const {
    Summary s = tally_.summary();
    s.late = late_;
    return s;
}

}  // namespace ratelimitd::simulate
