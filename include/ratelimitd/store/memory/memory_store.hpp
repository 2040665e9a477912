// The embedded store: the Lua algorithms of lua/*.lua in C++, for one instance without Redis.
#pragma once

#include "ratelimitd/core/clock.hpp"
#include "ratelimitd/store/store.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ratelimitd::store::memory {

/// Keeps every key in process memory, with the same semantics and the same numbers as the
/// Redis scripts (same rounding, reset rules, cost handling; a denied check changes nothing).
/// A key's state is dropped when Redis would have expired it, so memory stays bounded.
/// Limits are per instance: two sidecars with embedded stores do not share counters.
///
/// With `max_keys`, a flood of new keys cannot grow memory past it: each of the 64 shards
/// holds at most its share (max_keys / 64). A new key in a full shard first drops expired
/// keys found in a sample of that shard, else evicts the sampled key nearest its expiry
/// (Redis's volatile-ttl, approximated by sampling). An evicted key forgets its count, so
/// its next check starts afresh: eviction can only admit more, never deny wrongly; each one
/// is counted (evictions()).
/// @par Thread Safety
/// One MemoryStore is shared by every server thread; apply() may be called concurrently.
class MemoryStore final : public Store {
public:
    /// `clock` supplies the time (Redis TIME's role) and must outlive the store. `max_keys`
    /// 0: no cap; below 64 it acts as 64 (one key per shard).
    explicit MemoryStore(const Clock& clock, std::size_t max_keys = 0);
    ~MemoryStore() override;

    boost::asio::awaitable<result<check::Verdict>> apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) override;
    /// Always decides at once (decide()): the check costs no coroutine frame, and its time is
    /// `now`'s (Clock::now_ms_at), not a clock read of its own.
    std::optional<result<check::Verdict>> try_apply_now(const policy::Policy& p, const std::string& key,
                                                        std::uint32_t cost,
                                                        std::chrono::steady_clock::time_point now) override {
        return decide(p, key, cost, &now);
    }
    /// The same, written into the caller's verdict.
    std::optional<result<void>> try_apply_now_into(const policy::Policy& p, const std::string& key, std::uint32_t cost,
                                                   std::chrono::steady_clock::time_point now,
                                                   check::Verdict& out) override {
        decide_into(p, key, cost, &now, out);
        return result<void>();
    }
    boost::asio::awaitable<result<check::Verdict>> apply_all(std::vector<LimitCheck> checks) override;
    boost::asio::awaitable<result<check::Verdict>> peek(const policy::Policy& p,
                                                        std::string key) override;
    boost::asio::awaitable<result<bool>> reset(std::string key) override;
    boost::asio::awaitable<result<check::Verdict>> release(const policy::Policy& p, std::string key,
                                                           std::string lease) override;
    boost::asio::awaitable<bool> ready() override;
    std::string describe() const override;

    /// The synchronous core of apply(), for tests and benchmarks. Never fails. The time is the
    /// clock's, read under the shard's lock; with `at`, the clock's time of that instant.
    check::Verdict decide(const policy::Policy& p, const std::string& key, std::uint32_t cost,
                          const std::chrono::steady_clock::time_point* at = nullptr);
    /// decide(), written into `out` (its windows replaced).
    void decide_into(const policy::Policy& p, const std::string& key, std::uint32_t cost,
                     const std::chrono::steady_clock::time_point* at, check::Verdict& out);

    /// The synchronous core of apply_all(): every involved shard locked (in a fixed order),
    /// then all charged or none. Never fails.
    check::Verdict decide_all(const std::vector<LimitCheck>& checks);

    /// The synchronous core of peek(): the state of `key` without changing it.
    check::Verdict inspect(const policy::Policy& p, const std::string& key);

    /// The synchronous core of release().
    check::Verdict free_lease(const policy::Policy& p, const std::string& key, const std::string& lease);

    /// The synchronous core of reset(): true when live state was dropped.
    bool forget(const std::string& key);

    /// Drops every key whose TTL has passed; returns how many were dropped. apply() also
    /// drops expired keys as it goes, so calling this is optional.
    std::size_t sweep_expired();

    /// Number of keys held (expired ones not yet swept included). Never above max_keys,
    /// except by the keys of one layered check in a shard with room for fewer.
    std::size_t key_count() const;

    /// Live keys dropped so far to stay within max_keys (expired ones dropped are not counted).
    std::uint64_t evictions() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ratelimitd::store::memory
