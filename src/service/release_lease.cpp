// CheckService::release: the one way a concurrency slot is freed before its lease expires.
#include "ratelimitd/service/check_service.hpp"

#include "ratelimitd/policy/planner.hpp"

namespace ratelimitd::service {

boost::asio::awaitable<result<Decision>> CheckService::release(check::CheckRequest req, std::string lease) {
    auto target = policy::plan_state(registry_.current(), req);
    if (!target) co_return target.error();
    const policy::PlannedLimit& limit = target->limits.front();
    if (!policy::traits(limit.policy->algorithm).leases) {
        co_return Problem{errc::invalid_request,
                          "policy: \"" + limit.policy->name + "\" uses " + policy::to_string(limit.policy->algorithm) +
                              "; only leases of algorithm " +
                              policy::algorithm_names_or([](const policy::AlgorithmTraits& t) { return t.leases; }) +
                              " can be released"};
    }
    auto verdict = co_await store_.release(*limit.policy, limit.windows.front().key, std::move(lease));
    if (!verdict) co_return verdict.error();
    Decision d;
    d.policy = limit.policy->name;
    d.tenant = limit.tenant;
    d.scope = target->scope;
    d.verdict = std::move(*verdict);
    co_return d;
}

}  // namespace ratelimitd::service
