// The seam between deciding a check and keeping counters: Redis, embedded, or a test fake.
#pragma once

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/check_plan.hpp"
#include "ratelimitd/policy/policy.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ratelimitd::store {

/// One limit of a layered check: `cost` units of `policy` on `key`.
struct LimitCheck {
    const policy::Policy* policy = nullptr;  ///< points into a Registry the caller keeps alive
    std::string key;                         ///< built by policy::make_key
    std::uint32_t cost = 1;                  ///< 1..policy->max_cost()
    /// Mode::report: charge `report_cost` signed units without asking (Store::apply_all only).
    policy::Mode mode = policy::Mode::check;
    std::int64_t report_cost = 0;
    /// Mode::check in apply_all: how this check takes part in the call's decision (ask: cost 0).
    policy::Part part = policy::Part::decide;
};

/// True for a report that gives units back (a refund): like a reset, it must reach every
/// denial cache that may hold the key (here, and on other sidecars through the reset channel).
[[nodiscard]] inline bool gives_back(const LimitCheck& c) noexcept {
    return c.mode == policy::Mode::report && c.report_cost < 0;
}

/// Keeps the state of every key and decides checks atomically.
///
/// A Store object is used from one io_context thread (each server thread gets its own
/// handle from its store::Backend, see backend.hpp); implementations shared between threads
/// synchronise inside.
class Store {
public:
    virtual ~Store() = default;

    /// Applies `cost` units of policy `p` to `key` atomically: admits the whole cost or
    /// nothing, and a denied check changes no state. Completes on the caller's executor
    /// within the store timeout, with a Verdict (one WindowState per window of `p`), or with
    /// store_unavailable / store_timeout / bad_script_reply. Never throws.
    /// Preconditions: 1 <= cost <= p.max_cost(); `key` built by policy::make_key.
    virtual boost::asio::awaitable<result<check::Verdict>> apply(const policy::Policy& p,
                                                                 std::string key,
                                                                 std::uint32_t cost) = 0;

    /// apply()'s verdict when the store can decide at once, without suspending (the embedded
    /// store; a cached denial), else nothing: the caller then co_awaits apply(). Same
    /// preconditions and verdict as apply(); a store that answers here has charged the cost.
    /// `now` is the check's instant, read by the caller (its request's), so that the store
    /// reads no clock of its own for it. The default answers nothing. Never throws.
    virtual std::optional<result<check::Verdict>> try_apply_now(const policy::Policy& p, const std::string& key,
                                                                std::uint32_t cost,
                                                                std::chrono::steady_clock::time_point now);

    /// try_apply_now, its verdict written into `out` (the caller's decision's: no verdict
    /// built and moved on the way). Nothing: declined; an error: the store's failure. `out` is
    /// written only when it answers a verdict. The default is try_apply_now's answer, moved.
    virtual std::optional<result<void>> try_apply_now_into(const policy::Policy& p, const std::string& key,
                                                           std::uint32_t cost,
                                                           std::chrono::steady_clock::time_point now,
                                                           check::Verdict& out);

    /// apply(), for a check whose try_apply_now at this instant just answered nothing: a store
    /// that looked something up there (a cached denial) need not look again. The default is
    /// apply(). Same preconditions, completion and verdict as apply().
    virtual boost::asio::awaitable<result<check::Verdict>> apply_declined(const policy::Policy& p, std::string key,
                                                                          std::uint32_t cost) {
        return apply(p, std::move(key), cost);
    }

    /// apply(), its verdict written into `out` (the awaiting caller's decision's: no verdict
    /// moved back through each awaited layer). `out` must outlive the completion; after a
    /// failure it holds nothing to read. The default is apply()'s verdict, moved.
    virtual boost::asio::awaitable<result<void>> apply_into(const policy::Policy& p, std::string key,
                                                            std::uint32_t cost, check::Verdict& out);

    /// apply_declined(), written into `out` as apply_into() writes it. The default is
    /// apply_declined()'s verdict, moved.
    virtual boost::asio::awaitable<result<void>> apply_declined_into(const policy::Policy& p, std::string key,
                                                                     std::uint32_t cost, check::Verdict& out);

    /// Applies several limits as one atomic decision: when every check admits its cost, all
    /// are charged; when any denies, none is charged. The Verdict has one WindowState per
    /// check, in order; a check that would have admitted but was not charged reports its
    /// state unchanged, with allowed = true. Same completion, deadline and failures as apply().
    /// Checks in Mode::report (all of the call's, then) are charged without asking: each
    /// admits (allowed = true), possibly into debt (remaining 0), and a negative report_cost
    /// refunds, never above capacity; a store that announces resets announces each refunded
    /// key the same way (gives_back).
    /// A check with Part::ask asks without charging: it denies (and so the call) when nothing
    /// of its limit is left. A check with Part::charge is charged whatever the others do (its
    /// algorithm decides whether it admits), and does not keep the others from being charged.
    /// Preconditions: `checks` is not empty, its keys are distinct, each cost fits its policy.
    /// Never throws.
    virtual boost::asio::awaitable<result<check::Verdict>> apply_all(std::vector<LimitCheck> checks) = 0;

    /// The state of `key` for policy `p` without changing it: `remaining` is what is left now,
    /// reset/reset_after as for a check; `allowed` is true when at least one unit is left.
    /// Same failures as apply(). Never throws.
    virtual boost::asio::awaitable<result<check::Verdict>> peek(const policy::Policy& p,
                                                                std::string key) = 0;

    /// Forgets the state of `key` (an admin reset): the next check starts afresh. Completes
    /// with true when there was state to forget. Same failures as apply(). Never throws.
    virtual boost::asio::awaitable<result<bool>> reset(std::string key) = 0;

    /// Frees lease `lease` of the concurrency policy `p` on `key` (POST /v1/release): the
    /// Verdict's one window has allowed = true when a live lease was freed, false when the
    /// lease was unknown or had expired (nothing changed), and the state after it. Same
    /// failures as apply(). Never throws. Stores without leases answer invalid_request.
    virtual boost::asio::awaitable<result<check::Verdict>> release(const policy::Policy& p, std::string key,
                                                                   std::string lease);

    /// True when the store answers and is ready to decide (for Redis: connected, scripts
    /// loaded, PING answered within the timeout). Never throws.
    virtual boost::asio::awaitable<bool> ready() = 0;

    /// Short human description for the start-up log line, e.g. "redis://127.0.0.1:6379/0".
    virtual std::string describe() const = 0;
};

}  // namespace ratelimitd::store
