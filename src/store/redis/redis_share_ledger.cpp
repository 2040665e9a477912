// RedisShareLedger: lua/rlqs_share.lua for each bucket of a report, pipelined on a pooled
// blocking connection.
#include "ratelimitd/store/redis/redis_share_ledger.hpp"

#include "share_calls.hpp"

#include <spdlog/spdlog.h>

#include <string>

namespace ratelimitd::store::redis {

RedisShareLedger::RedisShareLedger(Endpoint endpoint, std::chrono::milliseconds timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout) {}

RedisShareLedger::RedisShareLedger(std::shared_ptr<EndpointSource> source, std::chrono::milliseconds timeout)
    : source_(std::move(source)), timeout_(timeout) {}

RedisShareLedger::~RedisShareLedger() = default;

std::string RedisShareLedger::describe() const { return endpoint_ ? endpoint_->describe() : source_->describe(); }

void RedisShareLedger::warn(const std::string& why) {
    std::uint64_t unlogged = 0;
    if (!warnings_.failed(unlogged)) return;
    spdlog::warn("rlqs shares: {}: {}{}", describe(), why,
                 unlogged > 0 ? " (" + std::to_string(unlogged) + " more failures since the last warning)"
                              : std::string());
}

std::unique_ptr<BlockingClient> RedisShareLedger::connected() {
    const std::optional<Endpoint> target = endpoint_ ? endpoint_ : source_->current();
    if (!target) {
        warn("no primary known yet");
        return nullptr;
    }
    const std::string where = target->describe();
    {
        const std::lock_guard lock(mutex_);
        if (where != pooled_for_) {
            idle_.clear();  // connections to a primary the Sentinel no longer names
            pooled_for_ = where;
        }
        if (!idle_.empty()) {
            auto client = std::move(idle_.back());
            idle_.pop_back();
            return client;
        }
    }
    std::string why;
    auto client = open_share_client(*target, timeout_, why);
    if (!client) warn(why);
    return client;
}

std::optional<std::vector<ShareGrant>> RedisShareLedger::run(BlockingClient& client,
                                                             const std::vector<ShareAsk>& asks) {
    std::vector<std::vector<std::string>> calls;
    calls.reserve(asks.size());
    for (const auto& ask : asks) calls.push_back(share_call(ask, false));
    std::string why;
    auto replies = client.pipeline(calls, why);
    if (replies && !replies->empty() && is_noscript(replies->front())) {
        // A Redis that restarted or flushed its scripts: EVAL loads it for the next reports.
        // A NOSCRIPT reply changed nothing, so the whole report is sent again.
        for (std::size_t i = 0; i < asks.size(); ++i) calls[i] = share_call(asks[i], true);
        replies = client.pipeline(calls, why);
    }
    if (!replies) {
        warn(why);
        return std::nullopt;
    }
    std::vector<ShareGrant> grants;
    grants.reserve(replies->size());
    for (const auto& reply : *replies) {
        auto grant = grant_of(reply);
        if (!grant) {
            if (is_readonly(reply) && source_) source_->suspect();  // failed over: ask the sentinels now
            warn("unexpected reply from lua/rlqs_share.lua: " + reply.str);
            return std::nullopt;
        }
        grants.push_back(*grant);
    }
    return grants;
}

std::optional<std::vector<ShareGrant>> RedisShareLedger::take(const std::vector<ShareAsk>& asks) {
    if (asks.empty()) return std::vector<ShareGrant>{};
    auto client = connected();
    if (!client) return std::nullopt;
    auto grants = run(*client, asks);
    if (!grants) return std::nullopt;  // the connection is dropped with the client
    if (warnings_.recovered()) spdlog::info("rlqs shares: {} answers again", describe());
    const std::lock_guard lock(mutex_);
    if (idle_.size() < pooled_connections) idle_.push_back(std::move(client));
    return grants;
}

}  // namespace ratelimitd::store::redis
