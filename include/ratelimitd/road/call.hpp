// One call on the road: what a door asks (borrowed until Road::decide hands back its
// awaitable: the road plans before it waits) and what it came to. The caller builds and owns
// it; every door, admin door and the simulator fill the same struct.
#pragma once

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/check_plan.hpp"
#include "ratelimitd/policy/planner.hpp"
#include "ratelimitd/policy/report_plan.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/rls_request.hpp"
#include "ratelimitd/road/maybe_problem.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::road {

/// What a call asks. No enumerator is 0: a call that forgot to say is refused.
enum class Ask : unsigned char {
    check = 1,    ///< /v1/check: `check`
    auth,         ///< /v1/auth and simulate: `auth`, `deny_status_asked`
    report,       ///< /v1/report: `report`
    release,      ///< /v1/release: `check` names the concurrency policy and key, `lease` the slot
    rls,          ///< ShouldRateLimit and POST /json: `rls`, into `rls_plan`
    peek,         ///< /v1/peek: `check`
    reset,        ///< /v1/reset: `check`
    envoy_peek,   ///< /v1/envoy/peek: `rls` (one descriptor), into `rls_plan`
    envoy_reset,  ///< /v1/envoy/reset: `rls` (one descriptor), into `rls_plan`
};

/// A limit as a log or audit line names it, taken from the plan before deciding moves its key.
struct NamedLimit {
    std::string policy;    ///< the policy's name, or an Envoy rule's label
    std::string key_hash;  ///< the first 16 hex digits of its key's SHA-256 (never the key)
};
using NamedLimits = std::vector<NamedLimit>;

/// One call. Kept small, and its members ordered to pack: an HTTP door that waits hands the
/// call to one frame of the road's, which Asio recycles only under 1,020 bytes (Road::decide).
struct Call {
    explicit Call(Ask a) noexcept : ask(a) {}

    /// Forgets what was asked (borrowed): Road::decide does, before a call outlives its door.
    void drop_asked() noexcept {
        check = nullptr;  // and whichever other member of the union was set
        lease = {};
    }

    // Asked, by the door. Borrowed until Road::decide hands back its awaitable.
    Ask ask;
    bool route_matched = false;  ///< auth: `route` is the route the caller matched already

    // What it came to, by the road (the flags here to pack with `ask`).
    bool forgot = false;         ///< reset, envoy_reset: there was state to forget
    bool never_asked = false;    ///< rls: decided without the store (RlsPlan::never_admitted)
    int deny_status = 429;       ///< auth: the status a denial answers with

    // Asked, continued.
    std::optional<int> deny_status_asked;  ///< auth: the proxy's own deny status
    /// The request's instant (RequestContext::arrived): the store's time and the heavy hitters'
    /// slice when the road decides at once. Unset: the road reads the clock.
    std::chrono::steady_clock::time_point now{};
    /// What is asked: the one member `ask` names.
    union {
        const check::CheckRequest* check = nullptr;  ///< check, release, peek, reset
        const policy::AuthRequest* auth;             ///< its hash_secret is the road's to choose
        const policy::ReportRequest* report;         ///< report
        const policy::RlsRequest* rls;               ///< rls, envoy_peek, envoy_reset
    };
    std::string_view lease;                 ///< release: the capability a check returned
    /// auth, when `route_matched`: the route the caller matched (the simulator's cache; nullptr:
    /// none matches); else the road matches.
    const policy::Route* route = nullptr;
    /// rls, envoy_peek, envoy_reset: where the plan goes; the caller's (the answer reads every
    /// descriptor's after the decision, and it is too big for the HTTP doors' waiting frame).
    policy::RlsPlan* rls_plan = nullptr;

    // What it came to, continued.
    /// Bad input (charges nothing and asks no store); for release, the admin asks and an rls
    /// call whose envoy_store_error is `unavailable`, a store failure too. Set: nothing else is.
    MaybeProblem problem;
    policy::CheckPlan plan;        ///< what was decided (its keys are moved out by deciding)
    service::Decision decision;    ///< check, auth, report, release, rls, peek
    /// report (a refund), envoy_reset: what the log and audit lines name.
    NamedLimits named;
};

}  // namespace ratelimitd::road
