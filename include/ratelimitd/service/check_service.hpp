// Turns a planned check into a decision: store, shadow, failure mode, counters.
#pragma once

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/check_plan.hpp"
#include "ratelimitd/policy/registry_handle.hpp"
#include "ratelimitd/service/crossing_sink.hpp"
#include "ratelimitd/service/metrics.hpp"
#include "ratelimitd/service/thread_top.hpp"
#include "ratelimitd/store/store.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace ratelimitd::road {
class Road;
}

namespace ratelimitd::service {

/// The plan's limit of each verdict window; inline for the common few.
using Owners = boost::container::small_vector<std::size_t, 4>;

/// The store checks of one group of a plan's limits (enforced or shadow): one for most
/// checks, kept inline so that deciding one allocates nothing for it.
using LimitChecks = boost::container::small_vector<store::LimitCheck, 2>;

/// What the HTTP layer renders for a planned check.
struct Decision {
    std::string policy;   ///< resolved policy name ("none" when not limited)
    /// Every limit's tenant, joined by ','; in place for one tenant of up to 48 bytes (a
    /// hashed identity among them), so deciding copies it without an allocation.
    policy::TenantText tenant;
    std::string scope;
    bool limited = true;  ///< false for routes with `policy: none`: allowed, no limit headers
    /// The store failed or timed out and the policy's on_store_error answered:
    /// verdict.allowed tells which way; verdict.windows is empty (no numbers are known).
    bool degraded = false;
    errc store_error = errc::store_unavailable;  ///< why, when degraded
    /// A shadow policy would have denied; the decision allows anyway (verdict.allowed) and
    /// verdict.windows holds the shadow windows' numbers too.
    bool shadow_denied = false;
    check::Verdict verdict;
    /// A report (POST /v1/report), charged without asking: every window admits.
    bool report = false;
    /// The plan's limit (index into CheckPlan::limits) of each window of verdict.windows.
    Owners owner;
    /// Some limit of the plan says on_store_error: deny, so a failed store would deny: the
    /// answer announces it, and a client that cannot reach ratelimitd follows it.
    bool fail_closed = false;

    /// The window that speaks for the plan's limit `limit`: its first denying window, else the
    /// one with the least remaining (as Verdict::reported does for the whole check). nullptr when
    /// the store decided none of its windows (a denial by another limit stops before shadow ones).
    const check::WindowState* window_of(std::size_t limit) const;
};

/// Decides planned checks: asks the store, applies shadow and the failure modes, counts.
/// One per server thread; holds references only.
class CheckService {
public:
    /// `top`: this thread's heavy hitters, or nullptr when they are off (top_k = 0).
    CheckService(const policy::RegistryHandle& registry, store::Store& store, Metrics& metrics,
                 ThreadTop* top = nullptr)
        : registry_(registry), store_(store), metrics_(metrics), top_(top) {}

    /// Decides every limit of `plan` as one: allowed only when each window of each limit
    /// admits, and a denial by one charges none (one Store::apply_all; a single window goes
    /// through Store::apply). Shadow limits are decided after the enforced ones admitted, and
    /// never deny (Decision::shadow_denied). Limits asked without charging (check_only,
    /// Part::ask) are asked in the same store call: one with nothing left denies the check,
    /// and nothing is charged. A single_call plan (envoyproxy/ratelimit's accounting) puts
    /// every limit, shadow ones too, in one store call, each taking its Part.
    /// `policy` and `tenant` of the Decision list every
    /// limit's, joined by ','. On a store failure it degrades, failing closed when any
    /// enforced limit says on_store_error: deny. No limits: allowed, not limited (an unmatched
    /// auth subrequest is counted). Never throws.
    /// Takes the plan by value: the coroutine owns it (and its registry snapshot) throughout.
    /// Its frame holds the plan and two decisions (over Asio's 1,020-byte recycling limit):
    /// a caller that can own them uses decide_now and decide_into, as the road does (tests
    /// use this one).
    boost::asio::awaitable<Decision> decide(policy::CheckPlan plan);

    /// decide() without suspending, when nothing has to be waited for: the plan has no limits,
    /// or it is one enforced plain check (one window, Mode::check) that the store answers at
    /// once (Store::try_apply_now: the embedded store, a cached denial). The decision and its
    /// counting are decide()'s, at the instant `now` (the request's: the store's time, the heavy
    /// hitters' slice), and the store's answer is counted in the latency histogram untimed
    /// (at_once): true, with the decision in `out` (the caller's: no decision is moved). False
    /// otherwise, with `plan` and `out` untouched: decide it with decide_into (or decide).
    /// `out` is a fresh Decision (default-constructed): its names are written in place.
    /// Reads no clock. Never throws but for bad_alloc.
    bool decide_now(policy::CheckPlan& plan, std::chrono::steady_clock::time_point now, Decision& out);

    /// decide() into `out`, for a caller whose frame owns both the plan and the decision: this
    /// coroutine keeps neither, so its frame stays small enough for Asio to recycle. Both must
    /// outlive its completion; the plan's keys are moved out. `declined_now`: decide_now was
    /// just asked about this plan and answered nothing, so its one store check goes to
    /// Store::apply_declined (the denial cache is asked once per check). Never throws.
    boost::asio::awaitable<void> decide_into(policy::CheckPlan& plan, Decision& out, bool declined_now = false);

    /// Admin: the state of the keys of `target`'s first limit (planned by the road as a check
    /// would plan it: policy::plan_state), without consuming. Store failures come back as
    /// Problems.
    boost::asio::awaitable<result<Decision>> peek(policy::CheckPlan target);

    /// Admin: forgets the state of the keys of `target`'s first limit. Completes with true when
    /// there was state to forget.
    boost::asio::awaitable<result<bool>> reset(policy::CheckPlan target);

    /// POST /v1/release: frees `lease` on the key of `target`, a planned concurrency limit
    /// (road::Road plans it). The Decision's verdict.allowed says whether a live
    /// lease was freed. Store failures come back as Problems (on_store_error decides checks,
    /// not releases).
    boost::asio::awaitable<result<Decision>> release(policy::CheckPlan target, std::string lease);

    /// Quota webhooks: where decided checks' crossed thresholds go (set before serving);
    /// nullptr: nowhere.
    void set_crossing_sink(CrossingSink* sink) noexcept { sink_ = sink; }

private:
    /// The road is the one caller: it plans on this service's registry and offers the admin
    /// doors what they read (the store's readiness, the heavy hitters, the crossing sink).
    /// Nothing else is handed out.
    friend class road::Road;

    /// Store::apply for one check (Store::try_apply_now first), apply_all for several; times
    /// it (an answer given at once: at_once) and counts failures. Takes the checks' keys
    /// before it returns.
    /// `declined_now`: try_apply_now already answered nothing for this one check.
    boost::asio::awaitable<result<check::Verdict>> ask_store(LimitChecks& checks, bool declined_now = false);
    /// ask_store's two waits: one Store::apply, one Store::apply_all.
    boost::asio::awaitable<result<check::Verdict>> ask_one(std::chrono::steady_clock::time_point started,
                                                           const policy::Policy& p, std::string key,
                                                           std::uint32_t cost);
    boost::asio::awaitable<result<check::Verdict>> ask_all(std::chrono::steady_clock::time_point started,
                                                           std::vector<store::LimitCheck> checks);
    /// ask_store's wait for one check try_apply_now declined, timed and counted as ask_one's:
    /// Store::apply_declined_into, its verdict written into `out`; takes `c`'s key when awaited.
    boost::asio::awaitable<result<void>> ask_declined_into(store::LimitCheck& c, check::Verdict& out);

    /// decide_into's shadow limits, once the enforced ones admitted: asked, their windows
    /// appended to `d`. False when `d` is final (degraded: nothing enforced answered).
    boost::asio::awaitable<bool> ask_shadow(policy::CheckPlan& plan, Decision& d);

    /// A store's answer, timed from `started` and counted when it failed.
    result<check::Verdict> timed(std::chrono::steady_clock::time_point started, result<check::Verdict>&& verdict);
    result<void> timed(std::chrono::steady_clock::time_point started, result<void>&& asked);
    /// A store's answer given at once (try_apply_now): counted in the latency histogram as 0 s,
    /// and when it failed.
    result<check::Verdict> at_once(result<check::Verdict>&& verdict);
    /// at_once's counting alone, for an answer written where it stays (`failure`: the
    /// store's error, when it failed).
    void count_at_once(std::optional<errc> failure);

    /// CheckPlan::single_call: every limit in one store call; only enforced ones deny. Fills
    /// `d`, which holds the plan's names.
    boost::asio::awaitable<void> decide_single_call(policy::CheckPlan& plan, Decision& d);

    /// A decision the store answered: counted, and its crossed thresholds offered. `now`: the
    /// check's instant, or nullptr (the heavy hitters read the clock if they count it).
    void settle(const Decision& d, const policy::CheckPlan& plan,
                const std::chrono::steady_clock::time_point* now = nullptr);

    /// The decision when the store failed: allowed unless `fail_closed`, degraded, counted.
    Decision degrade(Decision d, const policy::CheckPlan& plan, bool fail_closed,
                     const Problem& why);

    /// Counts each limit in ratelimitd_checks_total (and near-limit) by its windows;
    /// `owner[k]` is the limit of verdict window k; units (cost) and denial-cache hits too.
    /// A report counts no check; a refund counts in ratelimitd_refunds_total per limit.
    void count(const Decision& d, const policy::CheckPlan& plan, const Owners& owner,
               const std::chrono::steady_clock::time_point* now);

    /// Hands the thresholds the store says the decision's windows crossed to the sink.
    void offer_crossings(const Decision& d, const policy::CheckPlan& plan) const;

    const policy::RegistryHandle& registry_;
    store::Store& store_;
    Metrics& metrics_;
    ThreadTop* top_;
    CrossingSink* sink_ = nullptr;
};

}  // namespace ratelimitd::service
