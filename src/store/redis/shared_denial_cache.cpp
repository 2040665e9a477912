// SharedDenialCache: the caching fronts, the reconnect hook and the reset subscription.
#include "ratelimitd/store/redis/shared_denial_cache.hpp"

#include <utility>

namespace ratelimitd::store::redis {

SharedDenialCache::SharedDenialCache(bool enabled, std::function<std::string()> key_prefix)
    : enabled_(enabled), key_prefix_(std::move(key_prefix)) {}

SharedDenialCache::~SharedDenialCache() { stop(); }

Store& SharedDenialCache::front(Store& store) {
    if (!enabled_) return store;
    fronts_.push_back(std::make_unique<CachingStore>(store, cache_));
    return *fronts_.back();
}

std::function<void()> SharedDenialCache::reconnected_hook() {
    return [this] { cache_.clear(); };
}

void SharedDenialCache::start(std::function<std::optional<Endpoint>()> target, std::function<void()> on_failure) {
    if (!enabled_ || subscriber_) return;
    subscriber_.emplace(ResetSubscriber::Hooks{
        .target = std::move(target),
        .channel = [this] { return reset_channel(key_prefix_()); },
        .on_reset = [this](const std::string& key) { cache_.forget(key); },
        .on_subscribed = [this] { cache_.clear(); },
        .on_failure = std::move(on_failure),
    });
    subscriber_->start();
}

void SharedDenialCache::stop() {
    if (subscriber_) subscriber_->stop();
}

}  // namespace ratelimitd::store::redis
