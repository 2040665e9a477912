// The embedded store: lua/*.lua in C++ (one file per algorithm, see algorithms.hpp) over 64
// locked shards (shard.hpp). This file is the Store shell: locking, layered checks, peeks.
#include "ratelimitd/store/memory/memory_store.hpp"
#include "ratelimitd/store/memory/algorithms.hpp"
#include "ratelimitd/store/memory/concurrency.hpp"
#include "ratelimitd/store/memory/notify_marks.hpp"
#include "ratelimitd/store/memory/shard.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ratelimitd::store::memory {

using namespace detail;

struct MemoryStore::Impl {
    Impl(const Clock& c, std::size_t max_keys) : clock(c) {
        if (max_keys == 0) return;
        // Shares that add up to max_keys exactly, at least one key per shard.
        max_keys = std::max(max_keys, shard_count);
        for (std::size_t i = 0; i < shard_count; ++i) {
            shards[i].max_keys = max_keys / shard_count + (i < max_keys % shard_count ? 1 : 0);
        }
    }

    // The key's one hash picks the shard (its high bits) and, mixed again by the map, the slot.
    Shard& shard_of(const Key& key) { return shards[(key.hash >> (sizeof(std::size_t) * 8 - 16)) % shard_count]; }

    const Clock& clock;
    std::array<Shard, shard_count> shards;
    std::atomic<std::uint64_t> evictions{0};
    NotifyMarks marks;  ///< quota webhooks: the thresholds claimed in their windows
};

MemoryStore::MemoryStore(const Clock& clock, std::size_t max_keys)
    : impl_(std::make_unique<Impl>(clock, max_keys)) {}

MemoryStore::~MemoryStore() = default;

namespace {

// The scripts' peek mode (cost 0, nothing written), run on a copy of the one entry so the
// live state cannot change; a full quota resets "now", as in the scripts.
Reply peek_reply(const Map& map, const Key& key, const Policy& p, std::int64_t now) {
    Map scratch;
    if (auto it = map.find(key); it != map.end()) scratch.emplace(StoredKey(key.text), it->second);
    Reply r = run_algorithm(scratch, key, p, 0, now);
    if (r.remaining >= p.max_cost()) r.reset_ms = now;
    return r;
}

}  // namespace

namespace {

/// Per limit of a layered check: its reply, and whether its cost fits what is left.
struct LayeredReplies {
    std::vector<Reply> replies;
    std::vector<bool> fits;
    bool all_fit = true;
};

// multi.lua's first pass. A report asks nothing: charged whatever the others do, never peeked;
// a charge-only part is charged and its own verdict stands; every other limit is peeked, and
// fits while what is left covers its cost (an asked one, never charged: while a unit is left).
LayeredReplies first_pass(const std::vector<LimitCheck>& checks, const std::vector<Shard*>& shards,
                          const std::vector<Key>& keys, std::int64_t now) {
    LayeredReplies r{std::vector<Reply>(checks.size()), std::vector<bool>(checks.size()), true};
    for (std::size_t i = 0; i < checks.size(); ++i) {
        const LimitCheck& c = checks[i];
        Map& map = shards[i]->map;
        if (c.mode == policy::Mode::report) {
            r.replies[i] = run_report(map, keys[i], *c.policy, c.report_cost, now);
            continue;
        }
        if (c.part == policy::Part::charge) {
            r.replies[i] = run_algorithm(map, keys[i], *c.policy, static_cast<std::int64_t>(c.cost), now);
            continue;
        }
        r.replies[i] = peek_reply(map, keys[i], *c.policy, now);
        if (c.part == policy::Part::ask) {
            r.fits[i] = r.replies[i].allowed = r.replies[i].remaining >= 1;
        } else {
            r.fits[i] = r.replies[i].remaining >= static_cast<std::int64_t>(c.cost);
        }
        r.all_fit = r.all_fit && r.fits[i];
    }
    return r;
}

// Whether limit i of a layered check runs for real in the second pass: a decided limit, when
// every limit fits (all are charged) or when it does not (its denied path writes nothing and
// its verdict says why); a fit left unchanged because another limit denied does not.
bool decided_runs(const LimitCheck& c, const LayeredReplies& r, std::size_t i) {
    return c.mode != policy::Mode::report && c.part == policy::Part::decide && (r.all_fit || !r.fits[i]);
}

void second_pass(const std::vector<LimitCheck>& checks, const std::vector<Shard*>& shards,
                 const std::vector<Key>& keys, std::int64_t now, LayeredReplies& r) {
    for (std::size_t i = 0; i < checks.size(); ++i) {
        if (!decided_runs(checks[i], r, i)) continue;
        r.replies[i] = run_algorithm(shards[i]->map, keys[i], *checks[i].policy,
                                     static_cast<std::int64_t>(checks[i].cost), now);
    }
}

// The layered verdict: allowed when every limit allowed, one window per limit. As in
// lua/multi.lua, a limit that ran for real (a charge, or a decided limit that ran) may cross a
// webhook threshold, and a report may pass its debt bound.
check::Verdict layered_verdict(const std::vector<LimitCheck>& checks, const LayeredReplies& r, std::int64_t now,
                               NotifyMarks& marks) {
    check::Verdict v;
    v.allowed = true;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        const LimitCheck& c = checks[i];
        auto one = to_verdict(*c.policy, r.replies[i], now);
        const bool ran = c.mode == policy::Mode::check && (c.part == policy::Part::charge || decided_runs(c, r, i));
        if (ran) {
            marks.claim_crossings(*c.policy, c.key, c.cost, now, one.windows.front());
        } else if (c.mode == policy::Mode::report) {
            marks.claim_report(*c.policy, c.key, c.report_cost, r.replies[i].debt, now, one.windows.front());
        }
        v.allowed = v.allowed && one.allowed;
        v.windows.push_back(std::move(one.windows.front()));
    }
    return v;
}

}  // namespace

// multi.lua in C++: peek every limit, then charge all or only run the misfits (whose denied
// path writes nothing). A peek's remaining >= cost is exactly each algorithm's admit test.
check::Verdict MemoryStore::decide_all(const std::vector<LimitCheck>& checks) {
    // Lock every shard involved, in address (= index) order, so two layered checks that
    // share shards cannot deadlock; a shard holding two of the keys is locked once.
    std::vector<Key> keys;
    keys.reserve(checks.size());
    std::vector<Shard*> shards;
    shards.reserve(checks.size());
    for (const auto& c : checks) shards.push_back(&impl_->shard_of(keys.emplace_back(c.key)));
    std::vector<Shard*> order = shards;
    std::sort(order.begin(), order.end(), std::less<Shard*>{});
    order.erase(std::unique(order.begin(), order.end()), order.end());
    std::vector<std::unique_lock<std::mutex>> locks;
    locks.reserve(order.size());
    for (Shard* s : order) locks.emplace_back(s->mutex);

    const std::int64_t now = impl_->clock.now_ms();
    LayeredReplies replies = first_pass(checks, shards, keys, now);
    second_pass(checks, shards, keys, now, replies);
    for (Shard* s : order) {
        if (s->map.size() <= s->max_keys) continue;
        const auto written = [&checks](std::string_view k) {
            return std::any_of(checks.begin(), checks.end(), [&k](const LimitCheck& c) { return c.key == k; });
        };
        impl_->evictions.fetch_add(trim(*s, now, written), std::memory_order_relaxed);
    }
    locks.clear();
    return layered_verdict(checks, replies, now, impl_->marks);
}

boost::asio::awaitable<result<check::Verdict>> MemoryStore::apply_all(std::vector<LimitCheck> checks) {
    co_return decide_all(checks);
}

check::Verdict MemoryStore::decide(const policy::Policy& p, const std::string& key, std::uint32_t cost,
                                   const std::chrono::steady_clock::time_point* at) {
    check::Verdict v;
    decide_into(p, key, cost, at, v);
    return v;
}

void MemoryStore::decide_into(const policy::Policy& p, const std::string& key, std::uint32_t cost,
                              const std::chrono::steady_clock::time_point* at, check::Verdict& out) {
    const Key hashed(key);
    Shard& shard = impl_->shard_of(hashed);
    Reply r;
    std::int64_t now = 0;
    {
        std::lock_guard lock(shard.mutex);
        // The time is taken under the lock, as Redis reads TIME inside the script: checks of one
        // key then see non-decreasing times in the order they are decided. A check decided at
        // once brings its request's instant, read before the lock: two of one key may then see
        // their times out of order by what passed between reading and locking (a millisecond
        // boundary crossed in between), which the algorithms take as no time passed or that
        // little less (as after a step back of the clock). The token bucket dates such a
        // decision at its own last update (decision_time): a reservation dated earlier fell
        // less than a token's time after the one before it.
        now = at != nullptr ? impl_->clock.now_ms_at(*at) : impl_->clock.now_ms();
        r = p.queue_units == 0 ? run_algorithm(shard.map, hashed, p, static_cast<std::int64_t>(cost), now)
                               : run_reserve(shard.map, hashed, p, static_cast<std::int64_t>(cost), now);
        if (shard.map.size() > shard.max_keys) {
            const auto written = [&key](std::string_view k) { return k == key; };
            impl_->evictions.fetch_add(trim(shard, now, written), std::memory_order_relaxed);
        }
    }
    to_verdict_into(p, r, now, out);
    impl_->marks.claim_crossings(p, key, cost, now, out.windows.front());
}

// The scripts' "peek" mode: a check of cost 0 that writes nothing. It runs on a copy of the
// one entry, so the live state cannot change; a full quota resets "now", as in the scripts.
check::Verdict MemoryStore::inspect(const policy::Policy& p, const std::string& key) {
    const Key hashed(key);
    Shard& shard = impl_->shard_of(hashed);
    Map scratch;
    std::int64_t now = 0;
    {
        std::lock_guard lock(shard.mutex);
        now = impl_->clock.now_ms();
        if (auto it = shard.map.find(hashed); it != shard.map.end()) scratch.emplace(StoredKey(key), it->second);
    }
    Reply r = run_algorithm(scratch, hashed, p, 0, now);
    if (r.remaining >= p.max_cost()) r.reset_ms = now;
    auto v = to_verdict(p, r, now);
    v.allowed = v.windows.front().allowed = r.remaining >= 1;
    v.windows.front().retry_after_s = 0;
    return v;
}

check::Verdict MemoryStore::free_lease(const policy::Policy& p, const std::string& key, const std::string& lease) {
    const Key hashed(key);
    Shard& shard = impl_->shard_of(hashed);
    std::lock_guard lock(shard.mutex);
    const std::int64_t now = impl_->clock.now_ms();
    return to_verdict(p, release_lease(shard.map, hashed, p, lease, now), now);
}

boost::asio::awaitable<result<check::Verdict>> MemoryStore::release(const policy::Policy& p, std::string key,
                                                                    std::string lease) {
    co_return free_lease(p, key, lease);
}

bool MemoryStore::forget(const std::string& key) {
    const Key hashed(key);
    Shard& shard = impl_->shard_of(hashed);
    std::lock_guard lock(shard.mutex);
    auto it = shard.map.find(hashed);
    if (it == shard.map.end()) return false;
    const bool live = !expired(it->second, impl_->clock.now_ms());
    shard.map.erase(it);
    return live;
}

boost::asio::awaitable<result<check::Verdict>> MemoryStore::peek(const policy::Policy& p, std::string key) {
    co_return inspect(p, key);
}

boost::asio::awaitable<result<bool>> MemoryStore::reset(std::string key) { co_return forget(key); }

boost::asio::awaitable<result<check::Verdict>> MemoryStore::apply(const policy::Policy& p,
                                                                  std::string key,
                                                                  std::uint32_t cost) {
    // Decided synchronously: holding a shard lock for microseconds beats a thread hop.
    co_return decide(p, key, cost);
}

boost::asio::awaitable<bool> MemoryStore::ready() { co_return true; }

std::string MemoryStore::describe() const { return "embedded (per-instance limits)"; }

std::size_t MemoryStore::sweep_expired() {
    std::size_t dropped = 0;
    for (Shard& shard : impl_->shards) {
        std::lock_guard lock(shard.mutex);
        const std::int64_t now = impl_->clock.now_ms();
        // What the shard held since the last sweep: the room the next interval likely needs too.
        const std::size_t held = shard.map.size();
        dropped += boost::unordered::erase_if(shard.map, [now](const auto& kv) { return expired(kv.second, now); });
        // Give back the slot array after a burst of tenants has gone, down to what the last
        // interval held: shrinking to the few keys left would make the next interval's new keys
        // (a log of many clients: a new key on nearly every line) grow it again, rehashing
        // every key on the way. So a burst's room is given back at the second sweep after it.
        if (shard.map.bucket_count() > 64 && held * 4 < shard.map.bucket_count()) shard.map.rehash(0);
    }
    return dropped;
}

std::uint64_t MemoryStore::evictions() const { return impl_->evictions.load(std::memory_order_relaxed); }

std::size_t MemoryStore::key_count() const {
    std::size_t n = 0;
    for (const Shard& shard : impl_->shards) {
        std::lock_guard lock(shard.mutex);
        n += shard.map.size();
    }
    return n;
}

}  // namespace ratelimitd::store::memory
