// Turns a parsed check into a decision: validate, resolve, key, store, failure mode.
#pragma once

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/registry_handle.hpp"
#include "ratelimitd/service/metrics.hpp"
#include "ratelimitd/store/store.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::service {

/// What the HTTP layer renders for a check that passed validation.
struct Decision {
    std::string policy;   ///< resolved policy name ("none" when not limited)
    std::string tenant;
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
};

/// One limit of a layered decision: a policy, and the tenant whose budget it spends.
struct LimitTarget {
    const policy::Policy* policy = nullptr;  ///< points into the registry passed alongside
    std::string tenant;                      ///< a valid tenant
};

/// The store checks of one limit: one for a single-window policy, one per window (with the
/// hash-tagged window keys) for a multi-window one. The checks point into `p`.
std::vector<store::LimitCheck> store_checks(const policy::Policy& p, std::string_view prefix,
                                            std::string_view tenant, std::string_view scope,
                                            std::uint32_t cost);

/// Decides checks. One per server thread; holds references only.
class CheckService {
public:
    CheckService(const policy::RegistryHandle& registry, store::Store& store, Metrics& metrics)
        : registry_(registry), store_(store), metrics_(metrics) {}

    /// Validates `req` (tenant, scope, cost), resolves its policy on one registry snapshot,
    /// builds the key and asks the store. Client mistakes come back as a Problem and never
    /// reach the store; store failures come back as a degraded Decision. Never throws.
    boost::asio::awaitable<result<Decision>> check(check::CheckRequest req);

    /// Decides several limits as one, each for `cost` units on `scope` (already valid), each
    /// with its tenant's limits (policy::limits_for, `plan` being the caller's): allowed only
    /// when each window of each limit admits, and a denial by one charges none (one
    /// Store::apply_all; a single window goes through Store::apply). Shadow policies are
    /// decided after the enforced ones admitted, and never deny (Decision::shadow_denied).
    /// `policy` and `tenant` of the Decision list every limit's, joined by ','. On a store
    /// failure it degrades, failing closed when any enforced policy says on_store_error: deny.
    /// No limits: allowed, not limited. Never throws.
    boost::asio::awaitable<result<Decision>> check_limits(std::shared_ptr<const policy::Registry> registry,
                                                          std::vector<LimitTarget> limits,
                                                          std::string scope, std::uint32_t cost,
                                                          std::optional<std::string> plan = std::nullopt);

    /// Admin: the state of the key a check would use, without consuming. The request must
    /// resolve to a limited policy. Client mistakes as in check(); store failures as Problems.
    boost::asio::awaitable<result<Decision>> peek(check::CheckRequest req);

    /// Admin: forgets the state of the key a check would use. Completes with true when there
    /// was state to forget.
    boost::asio::awaitable<result<bool>> reset(check::CheckRequest req);

    /// The registry in force (for /readyz and the auth path).
    [[nodiscard]] std::shared_ptr<const policy::Registry> registry() const {
        return registry_.current();
    }

    store::Store& store() noexcept { return store_; }
    Metrics& metrics() noexcept { return metrics_; }

private:
    /// Where a request points: validated, resolved to a limited policy, key built.
    struct Target {
        std::shared_ptr<const policy::Registry> registry;  // keeps `policy` alive
        const policy::Policy* policy = nullptr;
        std::string tenant;
        std::string scope;
        std::vector<store::LimitCheck> checks;  // one per window
    };
    result<Target> target_of(check::CheckRequest req) const;

    /// Store::apply for one check, apply_all for several; times it and counts failures.
    boost::asio::awaitable<result<check::Verdict>> decide(std::vector<store::LimitCheck> checks);

    /// The decision when the store failed: allowed unless `fail_closed`, degraded, counted.
    Decision degrade(Decision d, const std::vector<LimitTarget>& limits, bool fail_closed, const Problem& why);

    /// Counts each limit in ratelimitd_checks_total (and near-limit) by its windows;
    /// `owner[k]` is the limit of verdict window k.
    void count(const Decision& d, const std::vector<LimitTarget>& limits, const std::vector<std::size_t>& owner);

    const policy::RegistryHandle& registry_;
    store::Store& store_;
    Metrics& metrics_;
};

}  // namespace ratelimitd::service
