// ClusterStore::apply_cross_slot: a layered check whose keys lie in several hash slots.
//
// One script cannot span slots, so the check is decided per slot group, in ascending slot
// order (a fixed order every sidecar shares): each group is one lua/multi.lua call on its
// node, atomic there. When a group denies (or fails), the groups charged before it get their
// charges back through lua/refund.lua, and the groups after it are only peeked. The guarantee
// (docs/cluster.md "Layered limits on a cluster"): no limit ever admits more than it would
// alone; a concurrent check may be denied while a refund is in flight; a refund that cannot be
// sent (its node died) leaves the charge to be repaid by time.
#include "ratelimitd/store/redis/cluster/cluster_store.hpp"

#include "ratelimitd/store/redis/cluster/key_slot.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "ratelimitd/store/redis/scripts.hpp"
#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <optional>

namespace ratelimitd::store::redis::cluster {

namespace net = boost::asio;

/// The checks of one hash slot, and the arguments their charge was sent with.
struct ClusterStore::SlotGroup {
    int slot = 0;
    std::vector<std::size_t> members;  ///< indexes into the layered check's checks
    std::vector<CheckArgs> sent;       ///< as sent by the last attempt (members, leases)
};

namespace {

std::vector<ClusterStore::SlotGroup> groups_by_slot(const std::vector<LimitCheck>& checks) {
    std::map<int, std::vector<std::size_t>> by_slot;  // ordered: ascending slots
    for (std::size_t i = 0; i < checks.size(); ++i) by_slot[key_slot(checks[i].key)].push_back(i);
    std::vector<ClusterStore::SlotGroup> groups;
    for (auto& [slot, members] : by_slot) groups.push_back({slot, std::move(members), {}});
    return groups;
}

std::vector<LimitCheck> checks_of(const ClusterStore::SlotGroup& g, const std::vector<LimitCheck>& all) {
    std::vector<LimitCheck> out;
    for (std::size_t i : g.members) out.push_back(all[i]);
    return out;
}

// The refund arguments of one charged check: what the charge sent, with the member slot
// naming the charge (refund.lua). A window refunded a whole window after its charge could hit
// the next window, so then the charge stays ("-1" matches no TTL).
CheckArgs refund_args(CheckArgs sent, const check::WindowState& charged, std::chrono::milliseconds since_charge) {
    if (policy::traits(sent.algorithm).cluster_refund == policy::ClusterRefund::by_reset) {
        const bool same_window = since_charge < std::chrono::milliseconds(sent.window_ms);
        sent.member = same_window ? std::to_string(charged.reset_after_ms) : "-1";
    }
    return sent;
}

}  // namespace

net::awaitable<result<check::Verdict>> ClusterStore::apply_cross_slot(std::vector<LimitCheck> checks) {
    const auto started = clock::now();
    const auto deadline = started + timeout_;
    auto groups = groups_by_slot(checks);
    check::WindowStates windows(checks.size());
    std::size_t charged = 0;
    std::optional<Problem> failure;
    bool denied = false;
    for (; charged < groups.size(); ++charged) {
        auto one = co_await charge_group(groups[charged], checks, deadline);
        if (!one) {
            failure = one.error();
            break;
        }
        for (std::size_t k = 0; k < groups[charged].members.size(); ++k) {
            windows[groups[charged].members[k]] = std::move(one->windows[k]);
        }
        if (!one->allowed) {
            denied = true;
            break;
        }
    }
    check::Verdict v;
    v.allowed = !failure && !denied;
    if (!v.allowed) {
        // The denying (or failed) group charged nothing; every group before it did.
        co_await refund_groups(groups, charged, checks, windows, started);
        if (failure) co_return *failure;
        co_await peek_groups(groups, charged + 1, checks, windows);
    }
    v.windows = std::move(windows);
    for (const auto& g : groups) {
        for (std::size_t k = 0; k < g.sent.size(); ++k) {
            attach_lease(v, g.members[k], *checks[g.members[k]].policy, g.sent[k].member);
        }
    }
    co_return v;
}

net::awaitable<result<check::Verdict>> ClusterStore::charge_group(SlotGroup& g, const std::vector<LimitCheck>& all,
                                                                  clock::time_point deadline) {
    const std::vector<LimitCheck> mine = checks_of(g, all);
    auto reply = co_await routed(g.slot, deadline, [&](ClusterNode& node, bool asking) {
        g.sent.clear();
        for (const auto& c : mine) g.sent.push_back(check_args(*c.policy, c.key, c.cost, node.members));
        return node.client.eval(multi_script(), grouped_checks_argv(g.sent), deadline, asking);
    });
    if (!reply) {
        g.sent.clear();
        co_return reply.error();
    }
    auto verdict = layered_verdict(*reply, mine);
    if (!verdict || !verdict->allowed) g.sent.clear();  // charged nothing: nothing to refund, no lease
    co_return verdict;
}

net::awaitable<void> ClusterStore::refund_groups(std::vector<SlotGroup>& groups, std::size_t charged,
                                                 const std::vector<LimitCheck>& all,
                                                 check::WindowStates& windows, clock::time_point started) {
    // A refund gets its own deadline: the check's may be spent, and a charge not given back
    // denies others until time repays it.
    const auto deadline = clock::now() + timeout_;
    for (std::size_t gi = 0; gi < charged; ++gi) {
        SlotGroup& g = groups[gi];
        std::vector<CheckArgs> args;
        const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started);
        for (std::size_t k = 0; k < g.sent.size(); ++k) args.push_back(refund_args(g.sent[k], windows[g.members[k]], since));
        g.sent.clear();  // refunded (or lost): no lease stays with the check
        auto reply = co_await routed(g.slot, deadline, [&](ClusterNode& node, bool asking) {
            return node.client.eval(refund_script(), grouped_checks_argv(args), deadline, asking);
        });
        refunds_.fetch_add(1, std::memory_order_relaxed);
        auto after = reply ? layered_verdict(*reply, checks_of(g, all)) : result<check::Verdict>(reply.error());
        if (!after) {
            refunds_failed_.fetch_add(1, std::memory_order_relaxed);
            spdlog::warn("redis cluster: a layered check's refund on slot {} failed ({}); its charge stays until "
                         "time repays it",
                         g.slot, after.error().detail);
            continue;
        }
        // Charged and given back: the state as it is now, and "would have admitted".
        for (std::size_t k = 0; k < g.members.size(); ++k) {
            windows[g.members[k]] = std::move(after->windows[k]);
            windows[g.members[k]].allowed = true;
        }
    }
}

net::awaitable<void> ClusterStore::peek_groups(const std::vector<SlotGroup>& groups, std::size_t from,
                                               const std::vector<LimitCheck>& all,
                                               check::WindowStates& windows) {
    // Never asked (a group before them denied): their numbers, read-only, one key at a time.
    for (std::size_t gi = from; gi < groups.size(); ++gi) {
        for (std::size_t i : groups[gi].members) {
            const auto& c = all[i];
            auto verdict = co_await peek(*c.policy, c.key);
            if (verdict) {
                windows[i] = std::move(verdict->windows.front());
                continue;
            }
            // Unknown, but never the reason of the denial: report the limit as untouched.
            windows[i].policy = c.policy->name;
            windows[i].allowed = true;
            windows[i].limit = c.policy->limit;
            windows[i].window_s = window_seconds(*c.policy);
            windows[i].remaining = c.policy->limit;
        }
    }
}

}  // namespace ratelimitd::store::redis::cluster
