// Every door's one road: a request value planned on one registry snapshot, decided by the
// thread's CheckService, and the outcome handed back. The doors (check, auth, report,
// release; gRPC's ShouldRateLimit) only translate their wire format into the request value
// and the outcome back into their wire format; none plans, reaches the registry or the
// service itself (docs/design.md, "One road per door").
#pragma once

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/identity.hpp"
#include "ratelimitd/policy/registry_handle.hpp"
#include "ratelimitd/policy/report_plan.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/rls_request.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::door {

/// A reverse proxy's auth subrequest (/v1/auth) as a value. Borrows everything.
struct AuthRequest {
    std::string_view method;                       ///< the original request's method
    std::string_view uri;                          ///< the original request's path and query
    const policy::IdentityInput& identity;         ///< its headers and peer
    std::optional<int> deny_status;                ///< the proxy's own, else the registry's auth.deny_status
    const std::optional<std::string>& env_secret;  ///< RATELIMITD_HASH_SECRET (effective_hash_secret)
};

/// What an auth subrequest came to: the decision and the status a denial answers with.
struct AuthOutcome {
    service::Decision decision;
    int deny_status = 429;
};

/// Who called, for the log line of a refund (an operator's act). Borrows.
struct Caller {
    std::string_view peer;        ///< the direct peer's address
    std::string_view request_id;  ///< the id the answer carries
};

/// A refunded limit as a refund's log line names it, taken from the plan before deciding.
struct RefundedLimit {
    std::string policy;
    std::string key_hash;  ///< the first 16 hex digits of its key's SHA-256 (never the key)
};
using RefundedLimits = std::vector<RefundedLimit>;

/// A release (/v1/release): the check's fields name the concurrency policy and key; `lease`
/// is the capability a check returned (its format is the wire's to check).
struct ReleaseRequest {
    check::CheckRequest check;
    std::string lease;
};

/// What a ShouldRateLimit call came to: its plan (the answer reads every descriptor's) and,
/// unless the plan is never_admitted (denied without asking the store), the decision.
struct RlsOutcome {
    policy::RlsPlan plan;
    service::Decision decision;
};

/// One per server thread, beside its CheckService; holds references only (a const Doors
/// still decides: the service it refers to is not its own). Every call plans
/// on one registry snapshot, so a reload between planning and deciding cannot mix two
/// configs. Bad input comes back as the planner's Problem, and charges nothing. Never throws
/// but for bad_alloc.
class Doors {
public:
    /// `registry`: the snapshot every call plans on; `service` decides (and counts).
    Doors(const policy::RegistryHandle& registry, service::CheckService& service) noexcept
        : registry_(registry), service_(service) {}

    /// The doors of the thread `service` serves, on its registry.
    explicit Doors(service::CheckService& service) noexcept : Doors(service.registry_handle(), service) {}

    /// /v1/check, the part that never suspends: policy::plan of `req` into `plan`, then
    /// CheckService::decide_now. The answer when that decided (bad input; no limits; a store
    /// that answers at once: the embedded one, a cached denial), else nothing: `plan` is then
    /// to be decided with decide_into. No frame is made on the way, so an answer known at once
    /// costs no allocation and no resume. `now`: the request's instant (RequestContext::arrived).
    std::optional<result<service::Decision>> check_now(const check::CheckRequest& req, policy::CheckPlan& plan,
                                                       std::chrono::steady_clock::time_point now) const;

    /// The rest of check_now's road: CheckService::decide_into. The caller owns `plan` and
    /// `out` until it completes.
    boost::asio::awaitable<void> decide_into(policy::CheckPlan& plan, service::Decision& out) const {
        return service_.decide_into(plan, out);
    }

    /// /v1/auth, the part that never suspends, as check_now is /v1/check's: policy::plan of
    /// `req` by the route and identity sources of one snapshot, for cost 1, into `plan`, and
    /// the status a denial answers with into `deny_status`; then CheckService::decide_now at
    /// `now` (an unmatched subrequest is counted by the service:
    /// ratelimitd_auth_unmatched_total). The outcome when that decided (bad input, no limits,
    /// a store that answers at once), else nothing: `plan` is then to be decided with
    /// decide_into, and `deny_status` holds. No frame is made on the way.
    std::optional<result<AuthOutcome>> auth_now(const AuthRequest& req, policy::CheckPlan& plan, int& deny_status,
                                                std::chrono::steady_clock::time_point now) const;

    /// /v1/report, the part that never suspends: policy::plan_report of `req` into `plan`, and
    /// for a refund (negative cost) the names its log lines need into `refunded` (taken before
    /// deciding moves the keys out). A Problem for bad input, which charges nothing. The rest
    /// of the road: decide_into (report mode), then log_refund. Its caller's frame owns the
    /// plan and the decision, as check_later's does.
    /// Whether the caller may give units back is the door's to ask before (door.hpp).
    std::optional<Problem> report_plan(const policy::ReportRequest& req, policy::CheckPlan& plan,
                                       RefundedLimits& refunded) const;

    /// A decided refund of `units` that the store took: logged (policy, key hash, units,
    /// `caller`), once per limit of `refunded`; counted by the service already.
    static void log_refund(const service::Decision& decision, std::uint64_t units, const RefundedLimits& refunded,
                           const Caller& caller);

    /// /v1/release: plans the key as a peek does (policy::plan_state), which must be a
    /// concurrency policy (else invalid_request), then CheckService::release. Store failures
    /// come back as Problems (on_store_error decides checks, not releases).
    boost::asio::awaitable<result<service::Decision>> release(ReleaseRequest req) const;

    /// ShouldRateLimit: policy::plan of the call's descriptors into `outcome` (or its
    /// Problem), then decide unless the plan is never_admitted; a denied call is then charged
    /// under envoy_denied_calls: charge. A store failure or timeout answers as
    /// EnvoyKeys::store_error says: each limit's on_store_error, allowed, denied, or a Problem
    /// (store_unavailable or store_timeout) the door answers UNAVAILABLE.
    /// The caller's frame holds the outcome, which it must
    /// keep until completion: this coroutine's holds only a copy of the plan's check (the
    /// decision moves its keys out), so it stays within Asio's recycling limit.
    boost::asio::awaitable<void> rls(const policy::RlsRequest& req, result<RlsOutcome>& outcome) const;

private:
    /// rls()'s plan, as an outcome not decided yet.
    result<RlsOutcome> rls_plan(const policy::RlsRequest& req) const;

    /// A degraded decision in `outcome` answered by `mode` (rls()).
    static void answer_store_error(policy::RlsStoreError mode, result<RlsOutcome>& outcome);

    /// envoy_denied_calls: charge: the denied call's costs charged as a report.
    boost::asio::awaitable<void> charge(const policy::RlsPlan& plan) const;

    const policy::RegistryHandle& registry_;
    service::CheckService& service_;
};

}  // namespace ratelimitd::door
