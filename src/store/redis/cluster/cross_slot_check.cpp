// CrossSlotCheck: a layered check whose keys lie in several hash slots (the order and the
// guarantee are in cross_slot_check.hpp).
#include "ratelimitd/store/redis/cluster/cross_slot_check.hpp"

#include "ratelimitd/store/redis/cluster/key_slot.hpp"
#include "ratelimitd/store/redis/scripts.hpp"
#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <utility>

namespace ratelimitd::store::redis::cluster {

namespace net = boost::asio;

namespace {

// The refund arguments of one charged check: what the charge sent, with the member slot
// naming the charge (refund.lua). A window refunded a whole window after its charge could hit
// the next window, so then the charge stays ("-1" matches no TTL).
CheckArgs refund_args(CheckArgs sent, const check::WindowState& charged, std::chrono::milliseconds since_charge) {
    if (sent.part == policy::Part::ask) sent.cost = 0;  // asked, never charged: nothing to give back
    sent.notify.clear();  // lua/refund.lua claims no webhook threshold
    if (policy::traits(sent.algorithm).cluster_refund == policy::ClusterRefund::by_reset) {
        const bool same_window = since_charge < std::chrono::milliseconds(sent.window_ms);
        sent.member = same_window ? std::to_string(charged.reset_after_ms) : "-1";
    }
    return sent;
}

}  // namespace

CrossSlotCheck::CrossSlotCheck(ClusterCalls cluster, std::vector<LimitCheck> checks)
    : cluster_(std::move(cluster)), checks_(std::move(checks)), windows_(checks_.size()) {
    std::map<int, std::vector<std::size_t>> by_slot;  // ordered: ascending slots
    for (std::size_t i = 0; i < checks_.size(); ++i) by_slot[key_slot(checks_[i].key)].push_back(i);
    for (auto& [slot, members] : by_slot) groups_.push_back({slot, std::move(members), {}});
}

net::awaitable<result<check::Verdict>> CrossSlotCheck::run() {
    const auto started = clock::now();
    const auto deadline = started + cluster_.timeout;
    std::size_t charged = 0;
    std::optional<Problem> failure;
    bool denied = false;
    for (; charged < groups_.size(); ++charged) {
        auto one = co_await charge_group(groups_[charged], deadline);
        if (!one) {
            failure = one.error();
            break;
        }
        for (std::size_t k = 0; k < groups_[charged].members.size(); ++k) {
            windows_[groups_[charged].members[k]] = std::move(one->windows[k]);
        }
        if (!one->allowed) {
            denied = true;
            // Checks charged whatever the others do (envoyproxy/ratelimit's accounting): every
            // group is charged, none given back.
            if (!charged_whatever()) break;
        }
    }
    check::Verdict v;
    v.allowed = !failure && !denied;
    if (!v.allowed && !(charged_whatever() && !failure)) {
        // The denying (or failed) group charged nothing; every group before it did.
        co_await refund_groups(charged, started);
        if (failure) co_return *failure;
        co_await peek_groups(charged + 1);
    }
    v.windows = std::move(windows_);
    for (const auto& g : groups_) {
        for (std::size_t k = 0; k < g.sent.size(); ++k) {
            attach_lease(v, g.members[k], *checks_[g.members[k]].policy, g.sent[k].member);
        }
    }
    co_return v;
}

bool CrossSlotCheck::charged_whatever() const {
    return std::all_of(checks_.begin(), checks_.end(), [](const LimitCheck& c) { return c.part == policy::Part::charge; });
}

std::vector<LimitCheck> CrossSlotCheck::checks_of(const SlotGroup& g) const {
    std::vector<LimitCheck> out;
    for (std::size_t i : g.members) out.push_back(checks_[i]);
    return out;
}

net::awaitable<result<check::Verdict>> CrossSlotCheck::charge_group(SlotGroup& g, clock::time_point deadline) {
    const std::vector<LimitCheck> mine = checks_of(g);
    auto reply = co_await cluster_.routed(g.slot, deadline, [&](ClusterNode& node, bool asking) {
        g.sent.clear();
        for (const auto& c : mine) g.sent.push_back(limit_args(c, node.members));
        return node.client.eval_owned(multi_script(), GroupedChecks(std::span<const CheckArgs>(g.sent)), deadline,
                                      asking);
    });
    if (!reply) {
        g.sent.clear();
        co_return reply.error();
    }
    auto verdict = layered_verdict(*reply, mine);
    if (!verdict || !verdict->allowed) g.sent.clear();  // charged nothing: nothing to refund, no lease
    co_return verdict;
}

net::awaitable<void> CrossSlotCheck::refund_groups(std::size_t charged, clock::time_point started) {
    // A refund gets its own deadline: the check's may be spent, and a charge not given back
    // denies others until time repays it.
    const auto deadline = clock::now() + cluster_.timeout;
    for (std::size_t gi = 0; gi < charged; ++gi) {
        SlotGroup& g = groups_[gi];
        // envoyproxy/ratelimit's counters keep what they were charged (its pods give nothing
        // back either): a group of those alone has nothing to send.
        const bool kept = std::all_of(g.members.begin(), g.members.end(), [this](std::size_t i) {
            return policy::traits(checks_[i].policy->algorithm).cluster_refund == policy::ClusterRefund::none;
        });
        if (kept) {
            g.sent.clear();
            continue;
        }
        std::vector<CheckArgs> args;
        const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started);
        for (std::size_t k = 0; k < g.sent.size(); ++k) args.push_back(refund_args(g.sent[k], windows_[g.members[k]], since));
        g.sent.clear();  // refunded (or lost): no lease stays with the check
        auto reply = co_await cluster_.routed(g.slot, deadline, [&](ClusterNode& node, bool asking) {
            return node.client.eval_owned(refund_script(), GroupedChecks(std::span<const CheckArgs>(args)), deadline,
                                          asking);
        });
        cluster_.refunds->fetch_add(1, std::memory_order_relaxed);
        auto after = reply ? layered_verdict(*reply, checks_of(g)) : result<check::Verdict>(reply.error());
        if (!after) {
            cluster_.refunds_failed->fetch_add(1, std::memory_order_relaxed);
            spdlog::warn("redis cluster: a layered check's refund on slot {} failed ({}); its charge stays until "
                         "time repays it",
                         g.slot, after.error().detail);
            continue;
        }
        // Charged and given back: the state as it is now, and "would have admitted".
        for (std::size_t k = 0; k < g.members.size(); ++k) {
            windows_[g.members[k]] = std::move(after->windows[k]);
            windows_[g.members[k]].allowed = true;
        }
    }
}

net::awaitable<void> CrossSlotCheck::peek_groups(std::size_t from) {
    // Never asked (a group before them denied): their numbers, read-only, one key at a time.
    for (std::size_t gi = from; gi < groups_.size(); ++gi) {
        for (std::size_t i : groups_[gi].members) {
            const auto& c = checks_[i];
            auto verdict = co_await cluster_.peek(*c.policy, c.key);
            if (verdict) {
                windows_[i] = std::move(verdict->windows.front());
                continue;
            }
            // Unknown, but never the reason of the denial: report the limit as untouched.
            windows_[i].policy = c.policy->name;
            windows_[i].allowed = true;
            windows_[i].limit = c.policy->limit;
            windows_[i].window_s = window_seconds(*c.policy);
            windows_[i].remaining = c.policy->limit;
        }
    }
}

}  // namespace ratelimitd::store::redis::cluster
