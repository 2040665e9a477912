// A decided call's attributes: the decision's own fields, the reported window's numbers.
#include "ratelimitd/road/call_span.hpp"

#include "ratelimitd/policy/algorithm.hpp"
#include "ratelimitd/policy/policy.hpp"

namespace ratelimitd::road {
namespace {

// The algorithm of the limit whose window the answer reports (Decision::owner maps a window
// to its limit in the plan), or nullptr when none is known.
const char* reported_algorithm(const Call& call) {
    const service::Decision& d = call.decision;
    const auto& windows = d.verdict.windows;
    if (windows.empty() || d.owner.size() != windows.size()) return nullptr;
    const auto index = static_cast<std::size_t>(&d.verdict.reported() - windows.data());
    const std::size_t limit = d.owner[index];
    if (limit >= call.plan.limits.size() || call.plan.limits[limit].policy == nullptr) return nullptr;
    return policy::to_string(call.plan.limits[limit].policy->algorithm);
}

}  // namespace

void add_call_attributes(trace::Span& span, const Call& call, std::string_view store) {
    if (call.problem) {
        span.add("ratelimit.problem", std::string(to_string(call.problem->code)));
        return;
    }
    const service::Decision& d = call.decision;
    span.add("ratelimit.policy", d.policy);
    span.add("ratelimit.verdict", d.verdict.allowed ? "allowed" : "denied");
    if (const char* algorithm = reported_algorithm(call)) span.add("ratelimit.algorithm", algorithm);
    if (!d.degraded && !d.verdict.windows.empty()) {
        const check::WindowState& w = d.verdict.reported();
        span.add("ratelimit.limit", w.limit);
        span.add("ratelimit.remaining", w.remaining);
    }
    span.add("ratelimit.cost", static_cast<std::int64_t>(call.plan.cost));
    span.add("ratelimit.store", std::string(store));
    span.add("ratelimit.degraded", d.degraded);
    span.add("ratelimit.fail_mode", d.fail_closed ? "deny" : "allow");
    span.add("ratelimit.cache_hit", d.verdict.from_denial_cache);
    if (d.shadow_denied) span.add("ratelimit.shadow_denied", true);
}

}  // namespace ratelimitd::road
