// ClusterShareLedger: lua/rlqs_share.lua per bucket on the primary owning its slot, MOVED and
// ASK followed, the slot map read with CLUSTER SLOTS.
#include "ratelimitd/store/redis/cluster/cluster_share_ledger.hpp"

#include "../share_calls.hpp"

#include "ratelimitd/store/redis/cluster/key_slot.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace ratelimitd::store::redis::cluster {

namespace {

constexpr std::uint16_t unowned = 0xffff;

}  // namespace

ClusterShareLedger::ClusterShareLedger(ClusterEndpoint endpoint, std::chrono::milliseconds timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout), slot_owner_(slot_count, unowned) {}

ClusterShareLedger::~ClusterShareLedger() = default;

void ClusterShareLedger::warn(const std::string& why) {
    std::uint64_t unlogged = 0;
    if (!warnings_.failed(unlogged)) return;
    spdlog::warn("rlqs shares: {}: {}{}", endpoint_.describe(), why,
                 unlogged > 0 ? " (" + std::to_string(unlogged) + " more failures since the last warning)"
                              : std::string());
}

void ClusterShareLedger::mark_stale() {
    const std::lock_guard lock(mutex_);
    stale_ = true;
}

std::unique_ptr<BlockingClient> ClusterShareLedger::client_for(const NodeAddress& node, std::string& why) {
    {
        const std::lock_guard lock(mutex_);
        if (auto it = idle_.find(node.str()); it != idle_.end() && !it->second.empty()) {
            auto client = std::move(it->second.back());
            it->second.pop_back();
            return client;
        }
    }
    Endpoint ep = endpoint_.seeds.front();  // the credentials
    ep.host = node.host;
    ep.port = node.port;
    ep.db = 0;
    auto client = open_share_client(ep, timeout_, why);
    if (!client) why = node.str() + ": " + why;
    return client;
}

void ClusterShareLedger::give_back(const NodeAddress& node, std::unique_ptr<BlockingClient> client) {
    const std::lock_guard lock(mutex_);
    auto& pool = idle_[node.str()];
    if (pool.size() < pooled_per_node) pool.push_back(std::move(client));
}

void ClusterShareLedger::install(const std::vector<SlotRange>& ranges) {
    std::vector<NodeAddress> owners;
    std::vector<std::uint16_t> slots(slot_count, unowned);
    for (const auto& r : ranges) {
        auto at = std::find(owners.begin(), owners.end(), r.primary);
        if (at == owners.end()) at = owners.insert(owners.end(), r.primary);
        std::fill(slots.begin() + r.first, slots.begin() + r.last + 1, static_cast<std::uint16_t>(at - owners.begin()));
    }
    const bool complete = std::find(slots.begin(), slots.end(), unowned) == slots.end();
    const std::lock_guard lock(mutex_);
    owners_ = std::move(owners);
    slot_owner_ = std::move(slots);
    stale_ = !complete;
}

bool ClusterShareLedger::refresh_if_stale(clock::time_point deadline) {
    std::vector<NodeAddress> candidates;
    {
        const std::lock_guard lock(mutex_);
        if (!stale_ || clock::now() - last_refresh_ < refresh_interval) return !owners_.empty();
        last_refresh_ = clock::now();
        candidates = owners_;  // the primaries known answer best; the seeds are the start
    }
    for (const auto& seed : endpoint_.seeds) {
        const NodeAddress a{seed.host, seed.port};
        if (std::find(candidates.begin(), candidates.end(), a) == candidates.end()) candidates.push_back(a);
    }
    std::string why = "no node answered";
    for (const auto& node : candidates) {
        if (clock::now() >= deadline) break;
        auto client = client_for(node, why);
        if (!client) continue;
        auto reply = client->command({"CLUSTER", "SLOTS"}, why);
        if (!reply) continue;
        auto ranges = parse_cluster_slots(*reply, node.host);
        if (!ranges || ranges->empty()) {
            why = ranges ? std::string("CLUSTER SLOTS listed no slot") : ranges.error().detail;
            continue;
        }
        give_back(node, std::move(client));
        install(*ranges);
        return true;
    }
    warn("cannot read the slot map: " + why);
    const std::lock_guard lock(mutex_);
    return !owners_.empty();
}

std::optional<std::vector<ClusterShareLedger::Pending>> ClusterShareLedger::route(const std::vector<ShareAsk>& asks) {
    std::vector<Pending> out;
    out.reserve(asks.size());
    const std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < asks.size(); ++i) {
        const std::uint16_t owner = slot_owner_[static_cast<std::size_t>(key_slot(asks[i].key))];
        if (owner == unowned) {
            stale_ = true;
            return std::nullopt;
        }
        out.push_back({i, owners_[owner], false});
    }
    return out;
}

std::optional<std::vector<Value>> ClusterShareLedger::call(BlockingClient& client, bool asking,
                                                           const std::vector<std::size_t>& which,
                                                           const std::vector<ShareAsk>& asks, std::string& why) {
    const auto send_all = [&](const std::vector<std::size_t>& picked, bool load) {
        std::vector<std::vector<std::string>> calls;
        for (const std::size_t i : picked) {
            if (asking) calls.push_back({"ASKING"});  // applies to the one command after it
            calls.push_back(share_call(asks[i], load));
        }
        auto replies = client.pipeline(calls, why);
        if (replies && asking) {
            std::vector<Value> own;  // the calls' replies, without ASKING's +OK
            for (std::size_t r = 1; r < replies->size(); r += 2) own.push_back(std::move((*replies)[r]));
            replies = std::move(own);
        }
        return replies;
    };
    auto replies = send_all(which, false);
    if (!replies) return std::nullopt;
    // A node that restarted or flushed its scripts: only the NOSCRIPT calls (which changed
    // nothing) are sent again, with the script's text.
    std::vector<std::size_t> unloaded, at;
    for (std::size_t r = 0; r < replies->size(); ++r) {
        if (is_noscript((*replies)[r])) {
            unloaded.push_back(which[r]);
            at.push_back(r);
        }
    }
    if (unloaded.empty()) return replies;
    auto loaded = send_all(unloaded, true);
    if (!loaded) return std::nullopt;
    for (std::size_t k = 0; k < at.size(); ++k) (*replies)[at[k]] = std::move((*loaded)[k]);
    return replies;
}

bool ClusterShareLedger::read_reply(const Value& reply, std::size_t ask, const std::vector<ShareAsk>& asks,
                                    Round& round) {
    if (auto grant = grant_of(reply)) {
        round.grants[ask] = *grant;
        return true;
    }
    const Redirect redirect = reply.is_error() ? parse_redirect(reply.str) : Redirect{};
    switch (redirect.kind) {
    case Redirect::Kind::moved: {
        // The slot has a new owner for good: routed there from now on, the rest read again soon.
        const std::lock_guard lock(mutex_);
        auto at = std::find(owners_.begin(), owners_.end(), redirect.target);
        if (at == owners_.end()) at = owners_.insert(owners_.end(), redirect.target);
        slot_owner_[static_cast<std::size_t>(key_slot(asks[ask].key))] = static_cast<std::uint16_t>(at - owners_.begin());
        stale_ = true;
        round.next.push_back({ask, redirect.target, false});
        return true;
    }
    case Redirect::Kind::ask: round.next.push_back({ask, redirect.target, true}); return true;
    case Redirect::Kind::cluster_down: mark_stale(); break;
    case Redirect::Kind::try_again:
    case Redirect::Kind::none: break;
    }
    warn("unexpected reply from lua/rlqs_share.lua: " + reply.str);
    return false;
}

bool ClusterShareLedger::send(const NodeAddress& node, bool asking, const std::vector<std::size_t>& which,
                              const std::vector<ShareAsk>& asks, Round& round) {
    std::string why;
    auto client = client_for(node, why);
    if (!client) {
        mark_stale();  // the node may have failed over: ask who owns its slots now
        warn(why);
        return false;
    }
    auto replies = call(*client, asking, which, asks, why);
    if (!replies) {
        mark_stale();
        warn(node.str() + ": " + why);
        return false;  // the connection is dropped with the client
    }
    for (std::size_t r = 0; r < replies->size(); ++r) {
        if (!read_reply((*replies)[r], which[r], asks, round)) return false;
    }
    give_back(node, std::move(client));
    return true;
}

std::optional<std::vector<ShareGrant>> ClusterShareLedger::take(const std::vector<ShareAsk>& asks) {
    if (asks.empty()) return std::vector<ShareGrant>{};
    const auto deadline = clock::now() + timeout_;
    if (!refresh_if_stale(deadline)) return std::nullopt;
    auto pending = route(asks);
    if (!pending) {
        warn("no primary owns a bucket's slot yet");
        return std::nullopt;
    }
    Round round{std::vector<std::optional<ShareGrant>>(asks.size()), {}};
    for (int hop = 0; hop <= max_redirects && !pending->empty(); ++hop) {
        if (hop > 0 && clock::now() >= deadline) {
            warn("redirected past the deadline");
            return std::nullopt;
        }
        // One pipeline per node (and per ASKING or not), the buckets in report order within it.
        std::map<std::pair<std::string, bool>, std::pair<NodeAddress, std::vector<std::size_t>>> groups;
        for (const Pending& p : *pending) {
            auto& group = groups[{p.node.str(), p.asking}];
            group.first = p.node;
            group.second.push_back(p.ask);
        }
        round.next.clear();
        for (const auto& [key, group] : groups) {
            if (!send(group.first, key.second, group.second, asks, round)) return std::nullopt;
        }
        *pending = std::move(round.next);
    }
    if (!pending->empty()) {
        warn("more than " + std::to_string(max_redirects) + " redirects for a bucket");
        return std::nullopt;
    }
    std::vector<ShareGrant> grants;
    grants.reserve(asks.size());
    for (const auto& g : round.grants) grants.push_back(*g);
    if (warnings_.recovered()) spdlog::info("rlqs shares: {} answers again", endpoint_.describe());
    return grants;
}

}  // namespace ratelimitd::store::redis::cluster
