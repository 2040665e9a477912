// A delayed /v1/auth answer: held, or denied when the process holds max_held_requests already
// or a policy that delayed it holds its max_held.
#include "ratelimitd/http/auth_hold.hpp"

#include "ratelimitd/http/auth_codec.hpp"

#include <algorithm>
#include <vector>

namespace ratelimitd::http {

namespace {

// The same decision denied: the delayed windows now deny, retrying when the delay is over.
service::Decision denied_for_holding(const service::Decision& d, std::int64_t delay_ms) {
    service::Decision denied = d;
    denied.verdict.allowed = false;
    for (auto& w : denied.verdict.windows) {
        if (w.delay_ms == 0) continue;
        w.allowed = false;
        w.retry_after_s = std::max<std::int64_t>(1, (delay_ms + 999) / 1000);
        w.delay_ms = 0;
    }
    return denied;
}

// The policies whose windows delayed the check, each with its own bound (from the plan the
// decision was made on: its registry snapshot keeps them alive).
std::vector<service::DelayingPolicy> delaying_policies(const road::Call& c) {
    std::vector<service::DelayingPolicy> delaying;
    for (const auto& w : c.decision.verdict.windows) {
        if (w.delay_ms == 0) continue;
        service::DelayingPolicy p{w.policy, std::nullopt};
        for (const auto& limit : c.plan.limits) {
            if (limit.policy != nullptr && limit.policy->name == w.policy) p.max_held = limit.policy->max_held;
        }
        delaying.push_back(p);
    }
    return delaying;
}

}  // namespace

Answer hold_or_refuse(EndpointServices& s, const road::Call& c, const Request& req, Answer res,
                      std::int64_t delay_ms) {
    const auto delaying = delaying_policies(c);
    auto slot = s.metrics.delays.try_hold(s.options.max_held_requests, delaying);
    if (!slot) {
        return make_auth_answer(denied_for_holding(c.decision, delay_ms), c.deny_status, req.version(),
                                req.keep_alive(), req.method() == bhttp::verb::head);
    }
    s.metrics.delays.observe_delay(service::DelayDoor::auth, delay_ms);
    res.hold(std::chrono::milliseconds(delay_ms), std::move(slot));
    return res;
}

}  // namespace ratelimitd::http
