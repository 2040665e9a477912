// The reset channel: names, and the subscriber thread.
#include "ratelimitd/store/redis/reset_channel.hpp"

#include "blocking_client.hpp"

#include <spdlog/spdlog.h>

#include <memory>
#include <vector>

namespace ratelimitd::store::redis {

namespace {

using namespace std::chrono_literals;

constexpr auto tick = 100ms;            // how often a quiet subscription looks around
constexpr auto subscriber_connect_timeout = 1s;
constexpr auto retry_pause = 250ms;     // after a failed attempt

bool same_place(const Endpoint& a, const Endpoint& b) { return a.host == b.host && a.port == b.port; }

/// A pub/sub "message" push for `channel`: its payload, else nullopt.
std::optional<std::string> message_payload(const Value& r, const std::string& channel) {
    if (r.type != Value::Type::array || r.elements.size() != 3) return std::nullopt;
    const Value& kind = r.elements[0];
    const Value& chan = r.elements[1];
    const Value& payload = r.elements[2];
    if (kind.type != Value::Type::string || kind.str != "message") return std::nullopt;
    if (chan.type != Value::Type::string || chan.str != channel) return std::nullopt;
    if (payload.type != Value::Type::string) return std::nullopt;
    return payload.str;
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

// Over the same Transport as the store's connections, so a rediss:// store is heard over TLS.
bool ResetSubscriber::subscribe_once(const Endpoint& ep, const std::string& channel) {
    BlockingClient c(ep, subscriber_connect_timeout);  // also the limit for AUTH and SUBSCRIBE
    if (!c.connect().empty()) return false;
    std::string why;
    if (ep.password) {
        auto auth = ep.username ? c.command({"AUTH", *ep.username, *ep.password}, why)
                                : c.command({"AUTH", *ep.password}, why);
        if (!auth || auth->is_error()) return false;
    }
    auto sub = c.command({"SUBSCRIBE", channel}, why);
    if (!sub || sub->is_error()) return false;
    // Resets published while nobody listened here are lost: start from an empty cache.
    hooks_.on_subscribed();
    spdlog::debug("reset channel {} subscribed at {}", channel, ep.describe());
    while (!stopping_) {
        auto message = c.receive(tick, why);
        if (!why.empty()) return true;  // the connection dropped
        if (message) {
            if (auto key = message_payload(*message, channel)) hooks_.on_reset(*key);
            continue;
        }
        const auto now_at = hooks_.target();
        if (!now_at || !same_place(*now_at, ep) || hooks_.channel() != channel) return true;
    }
    return true;
}

}  // namespace ratelimitd::store::redis
