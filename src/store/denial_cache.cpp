// DenialCache and CachingStore: local answers for keys the store denied, until they reset.
#include "ratelimitd/store/denial_cache.hpp"

#include <boost/container/small_vector.hpp>

namespace ratelimitd::store {

namespace net = boost::asio;

namespace {

std::int64_t ceil_seconds(std::chrono::nanoseconds d) {
    using namespace std::chrono;
    return (duration_cast<milliseconds>(d).count() + 999) / 1000;
}

/// A check's key while the inner store owns the string: a copy in the caller's frame, inline up
/// to 128 bytes (frames come from the thread's pool: core/awaitable_frames.hpp), where a
/// std::string copy was one malloc per check on Redis.
using KeptKey = boost::container::small_vector<char, 128>;

/// Only a denial of cost 1 can be remembered (DenialCache::remember's own first test): the
/// key's string is built for those alone.
bool may_remember(const check::Verdict& v, std::uint32_t cost) {
    return !v.allowed && cost == 1;
}

}  // namespace

std::optional<check::Verdict> DenialCache::lookup(const std::string& key, const PolicyNumbers& numbers,
                                                  clock::time_point now) {
    Shard& s = shard_of(key);
    std::lock_guard lock(s.mu);
    auto it = s.map.find(key);
    if (it == s.map.end()) return std::nullopt;
    if (now >= it->second.until || it->second.numbers != numbers) {
        s.map.erase(it);
        return std::nullopt;
    }
    check::Verdict v = it->second.verdict;
    // Count Retry-After and t down to the cached reset time; the epoch reset stays as it was.
    const std::int64_t left_s = std::max<std::int64_t>(1, ceil_seconds(it->second.until - now));
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(it->second.until - now).count();
    for (auto& w : v.windows) {
        w.crossed = 0;  // the store claimed the webhook threshold once, for the denial it answered
        w.past_limit = 0;  // counted nowhere: envoyproxy/ratelimit's local cache counts every hit over
        w.retry_after_s = std::min(w.retry_after_s, left_s);
        w.reset_after_s = std::min(w.reset_after_s, left_s);
        w.reset_after_ms = std::min<std::int64_t>(w.reset_after_ms, left_ms);
    }
    hits_.fetch_add(1, std::memory_order_relaxed);
    return v;
}

void DenialCache::remember(const std::string& key, const PolicyNumbers& numbers, std::uint32_t cost,
                           const check::Verdict& v, clock::time_point sent_at, std::uint64_t started_in) {
    if (v.allowed || cost != 1 || v.windows.empty()) return;
    std::int64_t shortest_ms = -1;
    for (const auto& w : v.windows) {
        if (w.remaining != 0) return;  // units left: a smaller cost could pass
        if (!w.allowed && (shortest_ms < 0 || w.reset_after_ms < shortest_ms)) shortest_ms = w.reset_after_ms;
    }
    // The store counts whole milliseconds (Redis TIME, truncated): its "now" may lie up to 1 ms
    // before sent_at, and so its reset up to 1 ms before sent_at + reset_after_ms. The cached
    // denial ends a millisecond early, so a caller that waits exactly Retry-After is asked about
    // by the store, never denied from here after the store's reset.
    shortest_ms -= 1;
    if (shortest_ms <= 0) return;
    Shard& s = shard_of(key);
    std::lock_guard lock(s.mu);
    // forget() bumps the generation before it takes this lock: either it runs after this
    // insert and erases it, or this check sees the bump and keeps nothing.
    if (generation() != started_in) return;
    if (s.map.size() >= max_per_shard_) {
        // Bounded memory under a flood of distinct keys: drop what has run out, else start over.
        const auto now = clock::now();
        std::erase_if(s.map, [now](const auto& kv) { return now >= kv.second.until; });
        if (s.map.size() >= max_per_shard_) s.map.clear();
    }
    s.map.insert_or_assign(key, Entry{sent_at + std::chrono::milliseconds(shortest_ms), numbers, v});
}

void DenialCache::forget(const std::string& key) {
    generation_.fetch_add(1, std::memory_order_acq_rel);
    Shard& s = shard_of(key);
    std::lock_guard lock(s.mu);
    s.map.erase(key);
}

void DenialCache::clear() {
    generation_.fetch_add(1, std::memory_order_acq_rel);
    for (auto& s : shards_) {
        std::lock_guard lock(s.mu);
        s.map.clear();
    }
}

net::awaitable<result<check::Verdict>> CachingStore::apply(const policy::Policy& p, std::string key,
                                                           std::uint32_t cost) {
    // A release frees a lease's slot long before the denial's reset (the oldest lease's
    // expiry): a cached denial would refuse checks that fit.
    if (!policy::traits(p.algorithm).cacheable_denials) co_return co_await inner_.apply(p, std::move(key), cost);
    const auto now = DenialCache::clock::now();
    const auto numbers = DenialCache::PolicyNumbers::of(p);
    if (auto cached = cache_.lookup(key, numbers, now)) {
        cached->from_denial_cache = true;  // counted per policy by the service
        co_return std::move(*cached);
    }
    const auto started_in = cache_.generation();
    const KeptKey kept(key.begin(), key.end());
    auto verdict = co_await inner_.apply(p, std::move(key), cost);
    if (verdict && may_remember(*verdict, cost)) {
        cache_.remember(std::string(kept.begin(), kept.end()), numbers, cost, *verdict, now, started_in);
    }
    co_return verdict;
}

net::awaitable<result<check::Verdict>> CachingStore::apply_declined(const policy::Policy& p, std::string key,
                                                                    std::uint32_t cost) {
    if (!policy::traits(p.algorithm).cacheable_denials) co_return co_await inner_.apply(p, std::move(key), cost);
    // try_apply_now looked this key up at this instant and found no denial: not again.
    const auto now = DenialCache::clock::now();
    const auto started_in = cache_.generation();
    const KeptKey kept(key.begin(), key.end());
    auto verdict = co_await inner_.apply(p, std::move(key), cost);
    if (verdict && may_remember(*verdict, cost)) {
        cache_.remember(std::string(kept.begin(), kept.end()), DenialCache::PolicyNumbers::of(p), cost, *verdict, now,
                        started_in);
    }
    co_return verdict;
}

net::awaitable<result<void>> CachingStore::apply_declined_into(const policy::Policy& p, std::string key,
                                                               std::uint32_t cost, check::Verdict& out) {
    if (!policy::traits(p.algorithm).cacheable_denials) {
        co_return co_await inner_.apply_into(p, std::move(key), cost, out);
    }
    const auto now = DenialCache::clock::now();
    const auto started_in = cache_.generation();
    const KeptKey kept(key.begin(), key.end());
    auto done = co_await inner_.apply_into(p, std::move(key), cost, out);
    if (done && may_remember(out, cost)) {
        cache_.remember(std::string(kept.begin(), kept.end()), DenialCache::PolicyNumbers::of(p), cost, out, now,
                        started_in);
    }
    co_return done;
}

std::optional<result<check::Verdict>> CachingStore::try_apply_now(const policy::Policy& p, const std::string& key,
                                                                  std::uint32_t cost,
                                                                  std::chrono::steady_clock::time_point now) {
    if (!policy::traits(p.algorithm).cacheable_denials) return inner_.try_apply_now(p, key, cost, now);
    if (auto cached = cache_.lookup(key, DenialCache::PolicyNumbers::of(p), now)) {
        cached->from_denial_cache = true;  // counted per policy by the service
        return result<check::Verdict>(std::move(*cached));
    }
    // The inner store's own answer at once would bypass remember(): only apply() asks it.
    return std::nullopt;
}

net::awaitable<result<check::Verdict>> CachingStore::apply_all(std::vector<LimitCheck> checks) {
    std::vector<std::string> refunded;
    for (const auto& c : checks) {
        if (gives_back(c)) refunded.push_back(c.key);
    }
    for (const auto& key : refunded) cache_.forget(key);
    auto verdict = co_await inner_.apply_all(std::move(checks));
    for (const auto& key : refunded) cache_.forget(key);  // a check sent before the refund may have been kept
    co_return verdict;
}

net::awaitable<result<check::Verdict>> CachingStore::peek(const policy::Policy& p, std::string key) {
    return inner_.peek(p, std::move(key));
}

net::awaitable<result<bool>> CachingStore::reset(std::string key) {
    cache_.forget(key);
    auto forgot = co_await inner_.reset(key);
    cache_.forget(key);  // a check sent before the reset may have been kept meanwhile
    co_return forgot;
}

}  // namespace ratelimitd::store
