// ClusterStore: slot routing over one ClusterNode per node, MOVED/ASK followed within the deadline.
#include "ratelimitd/store/redis/cluster/cluster_store.hpp"

#include "ratelimitd/store/redis/batch_args.hpp"
#include "ratelimitd/store/redis/flat_reply.hpp"
#include "ratelimitd/store/redis/reset_channel.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "ratelimitd/store/redis/scripts.hpp"
#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

namespace ratelimitd::store::redis::cluster {

namespace net = boost::asio;

namespace {

// Redirects (MOVED, ASK) followed per call: MOVED then ASK is the longest chain a migration
// produces. TRYAGAIN and CLUSTERDOWN are not counted: they are retried until the deadline, since
// a failover's CLUSTERDOWN lasts from the primary being marked failed until its replica is
// promoted (the better part of a second with a 1 s cluster-node-timeout).
constexpr int max_redirects = 6;
// Pause before retrying TRYAGAIN / CLUSTERDOWN (a migration or a failover in progress).
constexpr std::chrono::milliseconds retry_pause{5};
// CLUSTER SLOTS is asked at most this often; a failed discovery is retried this often.
constexpr std::chrono::milliseconds refresh_interval{100};
constexpr std::chrono::milliseconds discovery_timeout{1000};

}  // namespace

ClusterStore::ClusterStore(net::any_io_executor ex, ClusterEndpoint endpoint, std::chrono::milliseconds timeout,
                           std::string instance_id, int connections_per_node, Coalescing coalescing,
                           StateLayout layout)
    : executor_(ex),
      endpoint_(std::move(endpoint)),
      timeout_(timeout),
      instance_id_(std::move(instance_id)),
      connections_per_node_(connections_per_node),
      coalescing_(coalescing),
      layout_(layout),
      refresh_timer_(ex) {
    coalescing_.one_slot_per_batch = true;
    for (const auto& seed : endpoint_.seeds) node_at(NodeAddress{seed.host, seed.port});
    request_refresh();
}

ClusterStore::~ClusterStore() { stop(); }

void ClusterStore::stop() {
    stopped_ = true;
    refresh_timer_.cancel();
    for (auto& [_, node] : nodes_) node->stop();
}

void ClusterStore::on_reconnected(std::function<void()> hook) {
    on_reconnected_ = std::move(hook);
    for (auto& [_, node] : nodes_) node->client.on_reconnected(on_reconnected_);
}

ClusterNode& ClusterStore::node_at(const NodeAddress& address) {
    const std::string name = address.str();
    if (auto it = nodes_.find(name); it != nodes_.end()) return *it->second;
    Endpoint ep = endpoint_.seeds.front();  // the credentials
    ep.host = address.host;
    ep.port = address.port;
    ep.db = 0;
    // Sliding-log members must stay unique across this thread's nodes too.
    auto node = std::make_unique<ClusterNode>(executor_, ep, timeout_, connections_per_node_, coalescing_,
                                              instance_id_ + "/" + std::to_string(nodes_.size()), layout_);
    if (on_reconnected_) node->client.on_reconnected(on_reconnected_);
    if (stopped_) node->stop();
    std::lock_guard lock(mu_);
    return *nodes_.emplace(name, std::move(node)).first->second;
}

std::string ClusterStore::describe() const {
    const int n = primary_count_.load(std::memory_order_relaxed);
    if (!map_known_.load(std::memory_order_relaxed)) return endpoint_.describe() + " (slot map not known yet)";
    return endpoint_.describe() + " (" + std::to_string(n) + (n == 1 ? " primary)" : " primaries)");
}

bool ClusterStore::any_ready() const {
    if (!map_known_.load(std::memory_order_relaxed)) return false;
    std::lock_guard lock(mu_);
    return std::all_of(primaries_.begin(), primaries_.end(), [](const ClusterNode* p) { return p->client.any_ready(); });
}

bool ClusterStore::breaker_open() const {
    std::lock_guard lock(mu_);
    return std::any_of(nodes_.begin(), nodes_.end(), [](const auto& n) { return n.second->client.breaker_open(); });
}

std::uint64_t ClusterStore::batches_sent() const {
    std::lock_guard lock(mu_);
    std::uint64_t total = 0;
    for (const auto& [_, n] : nodes_) total += n->batches.batches_sent();
    return total;
}

std::uint64_t ClusterStore::checks_batched() const {
    std::lock_guard lock(mu_);
    std::uint64_t total = 0;
    for (const auto& [_, n] : nodes_) total += n->batches.checks_batched();
    return total;
}

// ---- slot map ---------------------------------------------------------------------------------

void ClusterStore::request_refresh() {
    if (refreshing_ || stopped_) return;
    refreshing_ = true;
    net::co_spawn(executor_, refresh(), net::detached);
}

net::awaitable<void> ClusterStore::refresh() {
    // At most one CLUSTER SLOTS per interval, however many MOVED replies arrive meanwhile.
    if (const auto since = clock::now() - last_refresh_; since < refresh_interval) {
        refresh_timer_.expires_after(refresh_interval - since);
        boost::system::error_code ec;
        co_await refresh_timer_.async_wait(net::redirect_error(net::use_awaitable, ec));
        if (stopped_) co_return;
    }
    // The primaries we know answer best; the seeds are the fallback (and the start).
    std::vector<std::pair<ClusterNode*, std::string>> candidates;
    std::set<ClusterNode*> seen;
    for (ClusterNode* p : primaries_) {
        if (seen.insert(p).second) candidates.emplace_back(p, std::string());
    }
    for (const auto& seed : endpoint_.seeds) {
        ClusterNode* s = &node_at(NodeAddress{seed.host, seed.port});
        if (seen.insert(s).second) candidates.emplace_back(s, std::string());
    }
    for (auto& [store, host] : candidates) {
        for (const auto& [name, node] : nodes_) {
            if (node.get() == store) host = name.substr(0, name.rfind(':'));
        }
    }

    bool installed = false;
    std::string last_error = "no node answered";
    for (auto& [store, host] : candidates) {
        std::vector<std::string> argv{std::string("CLUSTER"), std::string("SLOTS")};
        auto reply = co_await store->client.command(std::move(argv), clock::now() + std::max(timeout_, discovery_timeout));
        if (stopped_) co_return;
        if (!reply) {
            last_error = reply.error().detail;
            continue;
        }
        if (!host.empty() && host.front() == '[') host = host.substr(1, host.size() - 2);
        auto ranges = parse_cluster_slots(*reply, host);
        if (!ranges || ranges->empty()) {
            last_error = ranges ? std::string("CLUSTER SLOTS listed no slot") : ranges.error().detail;
            continue;
        }
        install(*ranges);
        installed = true;
        break;
    }
    last_refresh_ = clock::now();
    refreshing_ = false;
    if (!installed || !map_known_) {
        if (!installed) spdlog::warn("redis cluster: cannot read the slot map from {}: {}", endpoint_.describe(), last_error);
        else spdlog::warn("redis cluster: {} does not cover every slot yet", endpoint_.describe());
        request_refresh();  // waits out the interval first
    }
}

void ClusterStore::install(const std::vector<SlotRange>& ranges) {
    std::array<bool, slot_count> covered{};
    std::vector<ClusterNode*> owners;
    for (const auto& r : ranges) {
        ClusterNode* owner = &node_at(r.primary);
        for (int s = r.first; s <= r.last; ++s) {
            slots_[static_cast<std::size_t>(s)] = owner;
            covered[static_cast<std::size_t>(s)] = true;
        }
        if (std::find(owners.begin(), owners.end(), owner) == owners.end()) owners.push_back(owner);
    }
    const bool complete = std::all_of(covered.begin(), covered.end(), [](bool c) { return c; });
    const bool was_known = map_known_.load(std::memory_order_relaxed);
    const int before = primary_count_.load(std::memory_order_relaxed);
    {
        std::lock_guard lock(mu_);
        primaries_ = std::move(owners);
        primary_count_ = static_cast<int>(primaries_.size());
    }
    map_known_ = complete;
    if (complete && (!was_known || before != primary_count_)) {
        spdlog::info("redis cluster: slot map of {} read: {} primaries", endpoint_.describe(), primary_count_.load());
    }
}

// ---- routing ----------------------------------------------------------------------------------

net::awaitable<result<Value>> ClusterStore::routed(int slot, clock::time_point deadline, Attempt attempt) {
    ClusterNode* node = slots_[static_cast<std::size_t>(slot)];
    bool asking = false;
    std::string last;
    for (int redirects = 0; redirects < max_redirects;) {
        if (node == nullptr) {
            request_refresh();
            co_return Problem{errc::store_unavailable,
                              "redis cluster: the owner of slot " + std::to_string(slot) + " is not known yet"};
        }
        auto reply = co_await attempt(*node, asking);
        asking = false;
        if (!reply) {
            // The node may have failed over: find out who owns its slots now.
            if (reply.error().code == errc::store_unavailable) request_refresh();
            co_return reply;
        }
        if (!reply->is_error()) co_return reply;
        const Redirect redirect = parse_redirect(reply->str);
        last = reply->str;
        switch (redirect.kind) {
        case Redirect::Kind::none:
            co_return reply;
        case Redirect::Kind::moved:
            ++redirects;
            moved_.fetch_add(1, std::memory_order_relaxed);
            node = &node_at(redirect.target);
            slots_[static_cast<std::size_t>(redirect.slot)] = node;
            request_refresh();  // other slots probably moved too
            break;
        case Redirect::Kind::ask:
            ++redirects;
            ask_.fetch_add(1, std::memory_order_relaxed);
            node = &node_at(redirect.target);
            asking = true;
            break;
        case Redirect::Kind::try_again:
        case Redirect::Kind::cluster_down: {
            if (clock::now() + retry_pause >= deadline) {
                co_return Problem{errc::store_unavailable, "redis cluster: " + last};
            }
            net::steady_timer pause(executor_, retry_pause);
            boost::system::error_code ec;
            co_await pause.async_wait(net::redirect_error(net::use_awaitable, ec));
            if (redirect.kind == Redirect::Kind::cluster_down) request_refresh();
            node = slots_[static_cast<std::size_t>(slot)];
            break;
        }
        }
        if (clock::now() >= deadline) co_return Problem{errc::store_timeout, "redis did not answer in time"};
    }
    co_return Problem{errc::store_unavailable, "redis cluster: slot " + std::to_string(slot) + " still redirected after " +
                                                   std::to_string(max_redirects) + " redirects (" + last + ")"};
}

net::awaitable<result<check::Verdict>> ClusterStore::apply(const policy::Policy& p, std::string key,
                                                           std::uint32_t cost) {
    const int slot = key_slot(key);
    const auto deadline = clock::now() + timeout_;
    std::string lease;
    bool grouped = false;
    auto reply = co_await routed(slot, deadline, [&](ClusterNode& node, bool asking) {
        CheckArgs check = check_args(p, key, cost, node.members);
        lease = check.member;
        grouped = false;
        // After ASK, ASKING must go right before the script, so nothing is coalesced.
        if (coalescing_.enabled && !asking) return node.batches.call(std::move(check), deadline);
        if (!check.notify.empty()) {
            // Webhook thresholds are claimed by lua/batch.lua (a batch of one).
            grouped = true;
            std::vector<CheckArgs> one;
            one.push_back(std::move(check));
            return node.client.eval_owned(batch_script(), BatchChecks(std::move(one)), deadline, asking);
        }
        return node.client.eval_owned(script_for(p.algorithm), SingleCheck(std::move(check)), deadline, asking);
    });
    if (grouped) reply = FlatReply(reply, 1).element(0, p.limit);
    if (!reply) co_return reply.error();
    auto verdict = parse_verdict(*reply, p);
    if (verdict) attach_lease(*verdict, 0, p, lease);
    co_return verdict;
}

net::awaitable<result<check::Verdict>> ClusterStore::release(const policy::Policy& p, std::string key,
                                                             std::string lease) {
    const int slot = key_slot(key);
    const auto deadline = clock::now() + timeout_;
    auto reply = co_await routed(slot, deadline, [&](ClusterNode& node, bool asking) {
        return node.client.eval_owned(script_for(p.algorithm), release_call(p, key, lease), deadline, asking);
    });
    if (!reply) co_return reply.error();
    co_return parse_verdict(*reply, p);
}

net::awaitable<result<check::Verdict>> ClusterStore::apply_cross_slot(std::vector<LimitCheck> checks) {
    ClusterCalls calls{
        .routed = [this](int slot, clock::time_point deadline, Attempt attempt) {
            return routed(slot, deadline, std::move(attempt));
        },
        .peek = [this](const policy::Policy& p, std::string key) { return peek(p, std::move(key)); },
        .timeout = timeout_,
        .refunds = &refunds_,
        .refunds_failed = &refunds_failed_,
    };
    CrossSlotCheck check(std::move(calls), std::move(checks));
    co_return co_await check.run();
}

net::awaitable<result<check::Verdict>> ClusterStore::apply_all(std::vector<LimitCheck> checks) {
    const int slot = key_slot(checks.front().key);
    const bool one_slot =
        std::all_of(checks.begin(), checks.end(), [slot](const LimitCheck& c) { return key_slot(c.key) == slot; });
    if (!one_slot) co_return co_await apply_cross_slot(std::move(checks));
    const auto deadline = clock::now() + timeout_;
    std::vector<std::string> leases;
    auto reply = co_await routed(slot, deadline, [&](ClusterNode& node, bool asking) {
        std::vector<CheckArgs> args;
        args.reserve(checks.size());
        leases.clear();
        for (const auto& c : checks) {
            args.push_back(limit_args(c, node.members));
            leases.push_back(args.back().member);
        }
        return node.client.eval_owned(multi_script(), GroupedChecks(std::move(args)), deadline, asking);
    });
    if (!reply) co_return reply.error();
    auto verdict = layered_verdict(*reply, checks);
    for (std::size_t i = 0; verdict && i < checks.size(); ++i) attach_lease(*verdict, i, *checks[i].policy, leases[i]);
    // A refund gives units back as a reset does: other sidecars' denial caches must forget.
    for (std::size_t i = 0; verdict && i < checks.size(); ++i) {
        if (gives_back(checks[i])) co_await publish_reset(slot, checks[i].key, deadline);
    }
    co_return verdict;
}

net::awaitable<result<check::Verdict>> ClusterStore::peek(const policy::Policy& p, std::string key) {
    const int slot = key_slot(key);
    const auto deadline = clock::now() + timeout_;
    auto reply = co_await routed(slot, deadline, [&](ClusterNode& node, bool asking) {
        CheckArgs check = check_args(p, key, 1, node.members);
        return node.client.eval_owned(script_for(p.algorithm), SingleCheck(std::move(check), SingleMode::peek), deadline,
                                      asking);
    });
    if (!reply) co_return reply.error();
    co_return peek_verdict(*reply, p);
}

net::awaitable<result<bool>> ClusterStore::reset(std::string key) {
    const int slot = key_slot(key);
    const auto deadline = clock::now() + timeout_;
    auto reply = co_await routed(slot, deadline, [&](ClusterNode& node, bool asking) {
        std::vector<std::string> argv;
        argv.emplace_back("DEL");
        argv.push_back(key);
        return node.client.command(std::move(argv), deadline, asking);
    });
    if (!reply) co_return reply.error();
    auto forgot = reset_result(*reply);
    if (forgot.has_value()) co_await publish_reset(slot, key, deadline);
    co_return forgot;
}

net::awaitable<void> ClusterStore::publish_reset(int slot, const std::string& key, clock::time_point deadline) {
    // Cluster pub/sub reaches every node's subscribers, so any node will do: the key's.
    auto sent = co_await routed(slot, deadline, [&](ClusterNode& node, bool asking) {
        std::vector<std::string> publish{std::string("PUBLISH"), reset_channel_of_key(key), key};
        return node.client.command(std::move(publish), deadline, asking);
    });
    if (!sent || sent->is_error()) {
        spdlog::warn("reset of {} not announced to the other sidecars: {}", key,
                     sent ? sent->str : sent.error().detail);
    }
}

net::awaitable<bool> ClusterStore::ready() {
    if (!map_known_) {
        request_refresh();
        co_return false;
    }
    const std::vector<ClusterNode*> primaries = primaries_;  // install() may swap it meanwhile
    for (ClusterNode* p : primaries) {
        if (!co_await p->client.ready()) co_return false;
    }
    co_return true;
}

}  // namespace ratelimitd::store::redis::cluster
