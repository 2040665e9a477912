// The reset channel: names, and the subscriber thread.
#include "ratelimitd/store/redis/reset_channel.hpp"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <vector>

namespace ratelimitd::store::redis {

namespace {

using namespace std::chrono_literals;

constexpr auto tick = 100ms;            // how often a quiet subscription looks around
constexpr auto connect_timeout = 1s;
constexpr auto retry_pause = 250ms;     // after a failed attempt

struct ContextFree {
    void operator()(redisContext* c) const noexcept { redisFree(c); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextFree>;

struct ReplyFree {
    void operator()(redisReply* r) const noexcept { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

ReplyPtr command(redisContext* c, const std::vector<std::string>& argv) {
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const auto& a : argv) {
        args.push_back(a.data());
        lens.push_back(a.size());
    }
    return ReplyPtr(static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(args.size()), args.data(), lens.data())));
}

bool same_place(const Endpoint& a, const Endpoint& b) { return a.host == b.host && a.port == b.port; }

/// A pub/sub "message" push for `channel`: its payload, else nullopt.
std::optional<std::string> message_payload(const redisReply* r, const std::string& channel) {
    if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
        return std::nullopt;
    }
    const redisReply* kind = r->element[0];
    const redisReply* chan = r->element[1];
    const redisReply* payload = r->element[2];
    if (kind->type != REDIS_REPLY_STRING || std::string_view(kind->str, kind->len) != "message") return std::nullopt;
    if (chan->type != REDIS_REPLY_STRING || std::string_view(chan->str, chan->len) != channel) return std::nullopt;
    if (payload->type != REDIS_REPLY_STRING) return std::nullopt;
    return std::string(payload->str, payload->len);
}

}  // namespace

std::string reset_channel(std::string_view prefix) { return std::string(prefix) + ":resets"; }

std::string reset_channel_of_key(std::string_view key) { return reset_channel(key.substr(0, key.find(':'))); }

void ResetSubscriber::start() { thread_ = std::thread([this] { run(); }); }

void ResetSubscriber::stop() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

bool ResetSubscriber::wait_or_stop(std::chrono::milliseconds d) {
    std::unique_lock lock(mu_);
    return wake_.wait_for(lock, d, [this] { return stopping_.load(); });
}

void ResetSubscriber::run() {
    while (!stopping_) {
        const auto ep = hooks_.target();
        if (ep && subscribe_once(*ep, hooks_.channel())) continue;  // it moved: at once
        hooks_.on_failure();
        if (wait_or_stop(retry_pause)) return;
    }
}

bool ResetSubscriber::subscribe_once(const Endpoint& ep, const std::string& channel) {
    const timeval tv{0, static_cast<suseconds_t>(std::chrono::microseconds(connect_timeout).count())};
    ContextPtr c(redisConnectWithTimeout(ep.host.c_str(), ep.port, tv));
    if (!c || c->err) return false;
    redisSetTimeout(c.get(), timeval{1, 0});  // for AUTH and SUBSCRIBE; reads below use poll()
    if (ep.password) {
        auto auth = ep.username ? command(c.get(), {"AUTH", *ep.username, *ep.password}) : command(c.get(), {"AUTH", *ep.password});
        if (!auth || auth->type == REDIS_REPLY_ERROR) return false;
    }
    auto sub = command(c.get(), {"SUBSCRIBE", channel});
    if (!sub || sub->type == REDIS_REPLY_ERROR) return false;
    // Resets published while nobody listened here are lost: start from an empty cache.
    hooks_.on_subscribed();
    spdlog::debug("reset channel {} subscribed at {}", channel, ep.describe());
    while (!stopping_) {
        void* raw = nullptr;
        if (redisGetReplyFromReader(c.get(), &raw) != REDIS_OK) return true;
        if (raw != nullptr) {
            ReplyPtr r(static_cast<redisReply*>(raw));
            if (auto key = message_payload(r.get(), channel)) hooks_.on_reset(*key);
            continue;
        }
        pollfd pfd{c->fd, POLLIN, 0};
        const int ready = ::poll(&pfd, 1, static_cast<int>(tick.count()));
        if (ready < 0 && errno != EINTR) return true;
        if (ready > 0 && redisBufferRead(c.get()) != REDIS_OK) return true;  // the connection dropped
        const auto now_at = hooks_.target();
        if (!now_at || !same_place(*now_at, ep) || hooks_.channel() != channel) return true;
    }
    return true;
}

}  // namespace ratelimitd::store::redis
