// RedisShareLedger: lua/rlqs_share.lua for each bucket of a report, pipelined on a pooled
// blocking connection.
#include "ratelimitd/store/redis/redis_share_ledger.hpp"

#include "blocking_client.hpp"

#include "ratelimitd/store/redis/scripts.hpp"

#include <spdlog/spdlog.h>

#include <string>

namespace ratelimitd::store::redis {

namespace {

const Script& share_script() {
    static const Script& script = [] () -> const Script& {
        for (const auto& s : scripts()) {
            if (s.name == "rlqs_share") return s;
        }
        throw std::logic_error("no embedded script lua/rlqs_share.lua");  // a build defect
    }();
    return script;
}

std::vector<std::string> share_call(const std::string& verb, const std::string& script, const ShareAsk& ask) {
    return {verb,
            script,
            "1",
            ask.key,
            ask.envoy,
            std::to_string(ask.allowed),
            std::to_string(ask.denied),
            std::to_string(ask.elapsed.count()),
            std::to_string(ask.limit),
            std::to_string(ask.window.count()),
            std::to_string(ask.ttl.count()),
            std::to_string(ask.interval.count()),
            std::to_string(RedisShareLedger::max_live_envoys)};
}

bool is_noscript(const Value& reply) { return reply.is_error() && reply.str.rfind("NOSCRIPT", 0) == 0; }

std::optional<ShareGrant> grant_of(const Value& reply) {
    if (reply.type != Value::Type::array || reply.elements.size() != 3) return std::nullopt;
    for (const auto& e : reply.elements) {
        if (e.type != Value::Type::integer || e.integer < 0) return std::nullopt;
    }
    return ShareGrant{static_cast<std::uint64_t>(reply.elements[0].integer),
                      static_cast<std::uint64_t>(reply.elements[1].integer),
                      static_cast<std::uint64_t>(reply.elements[2].integer)};
}

}  // namespace

RedisShareLedger::RedisShareLedger(Endpoint endpoint, std::chrono::milliseconds timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout) {}

RedisShareLedger::~RedisShareLedger() = default;

std::unique_ptr<BlockingClient> RedisShareLedger::connected() {
    {
        const std::lock_guard lock(mutex_);
        if (!idle_.empty()) {
            auto client = std::move(idle_.back());
            idle_.pop_back();
            return client;
        }
    }
    auto client = std::make_unique<BlockingClient>(endpoint_, timeout_);
    if (auto failed = client->connect(); !failed.empty()) {
        spdlog::warn("rlqs shares: {}: {}", endpoint_.describe(), failed);
        return nullptr;
    }
    std::string why;
    if (endpoint_.password) {
        auto auth = endpoint_.username ? client->command({"AUTH", *endpoint_.username, *endpoint_.password}, why)
                                       : client->command({"AUTH", *endpoint_.password}, why);
        if (!auth || auth->is_error()) return nullptr;
    }
    if (endpoint_.db != 0) {
        auto select = client->command({"SELECT", std::to_string(endpoint_.db)}, why);
        if (!select || select->is_error()) return nullptr;
    }
    return client;
}

std::optional<std::vector<ShareGrant>> RedisShareLedger::run(BlockingClient& client,
                                                             const std::vector<ShareAsk>& asks) {
    const Script& script = share_script();
    std::vector<std::vector<std::string>> calls;
    calls.reserve(asks.size());
    for (const auto& ask : asks) calls.push_back(share_call("EVALSHA", script.sha1, ask));
    std::string why;
    auto replies = client.pipeline(calls, why);
    if (replies && !replies->empty() && is_noscript(replies->front())) {
        // A Redis that restarted or flushed its scripts: EVAL loads it for the next reports.
        // A NOSCRIPT reply changed nothing, so the whole report is sent again.
        for (std::size_t i = 0; i < asks.size(); ++i) calls[i] = share_call("EVAL", std::string(script.text), asks[i]);
        replies = client.pipeline(calls, why);
    }
    if (!replies) {
        spdlog::warn("rlqs shares: {}: {}", endpoint_.describe(), why);
        return std::nullopt;
    }
    std::vector<ShareGrant> grants;
    grants.reserve(replies->size());
    for (const auto& reply : *replies) {
        auto grant = grant_of(reply);
        if (!grant) {
            spdlog::warn("rlqs shares: unexpected reply from lua/rlqs_share.lua: {}", reply.str);
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
    const std::lock_guard lock(mutex_);
    if (idle_.size() < pooled_connections) idle_.push_back(std::move(client));
    return grants;
}

}  // namespace ratelimitd::store::redis
