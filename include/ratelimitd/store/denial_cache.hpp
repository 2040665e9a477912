// Answers repeated checks of a key that the store just denied, without a round trip.
#pragma once

#include "ratelimitd/store/store.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace ratelimitd::store {

/// Remembers, per key, that the store denied a check of cost 1 until time T, and denies every
/// check of that key (any cost) until T without asking the store.
///
/// Why this is exact, for every algorithm: a cost-1 denial means not even one unit is left.
/// Before T (the next token for the token bucket, the oldest entry leaving the sliding log,
/// the window's end for the fixed window) no unit can come back: other sidecars can only use
/// more, and only an admin reset or a refund gives units back, which call forget(). The cached answer
/// keeps remaining = 0 and counts Retry-After down to T. T is taken on this side as the time
/// the command was *sent* plus the store's "ms until reset", less the millisecond the store's
/// truncated clock may lag behind, so the local deadline ends no later than the store's. For a larger cost the real retry time may be later than T; the
/// answer's Retry-After is then a lower bound, and the check after it goes to the store.
/// A Redis that lost its state (restart, failover) gives units back too: the cache is cleared
/// whenever a connection is set up again. A FLUSHALL without a reconnect is not seen: those
/// keys stay denied until their T, never admitted early.
/// Denials with units left (a larger cost that did not fit) are not cached: a smaller cost may
/// still pass, and the store is asked.
/// A reload that changes a policy's numbers changes what the store would answer: each entry
/// keeps the numbers it was decided under, and a lookup under other numbers drops it. A reset
/// (forget/clear, here or, through the store's reset channel, on another sidecar) bumps the
/// generation; a reply to a check that started before the bump is not kept, since the store
/// may have decided it before the reset.
/// @par Thread Safety
/// Shared by all server threads; every member may be called concurrently.
class DenialCache {
public:
    using clock = std::chrono::steady_clock;

    /// The numbers of a policy that decide the store's answer; equal numbers, equal answers.
    struct PolicyNumbers {
        policy::Algorithm algorithm = policy::Algorithm::token_bucket;
        std::int64_t limit = 0;
        std::int64_t window_ms = 0;
        std::int64_t burst = 0;
        bool long_ttl = false;
        static PolicyNumbers of(const policy::Policy& p) noexcept {
            return {p.algorithm, p.limit, p.window.count(), p.burst, p.long_ttl};
        }
        bool operator==(const PolicyNumbers&) const = default;
    };

    explicit DenialCache(std::size_t max_entries = 200'000) : max_per_shard_(max_entries / shard_count + 1) {}

    /// The cached denial of `key` under policy numbers `numbers`, aged to `now`; nullopt when
    /// there is none, it ran out, or it was decided under other numbers (a reload).
    std::optional<check::Verdict> lookup(const std::string& key, const PolicyNumbers& numbers, clock::time_point now);

    /// The current generation: take it before sending a check, give it to remember().
    [[nodiscard]] std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }

    /// Records the store's answer to a check of `cost` under `numbers`, sent at `sent_at`
    /// when the generation was `started_in` (only cost-1 denials with nothing remaining in
    /// any window are kept, and only when no reset happened since the check started).
    void remember(const std::string& key, const PolicyNumbers& numbers, std::uint32_t cost, const check::Verdict& v,
                  clock::time_point sent_at, std::uint64_t started_in);

    /// Drops what is known about `key` (admin reset, here or on another sidecar).
    void forget(const std::string& key);

    /// Drops everything: the store may have lost its state (Redis reconnected, possibly
    /// restarted empty, or the reset channel was lost for a while), so what was denied may
    /// pass again.
    void clear();

    [[nodiscard]] std::uint64_t hits() const noexcept { return hits_.load(std::memory_order_relaxed); }

private:
    struct Entry {
        clock::time_point until;
        PolicyNumbers numbers;
        check::Verdict verdict;
    };
    struct alignas(64) Shard {
        std::mutex mu;
        std::unordered_map<std::string, Entry> map;
    };
    static constexpr std::size_t shard_count = 16;
    Shard& shard_of(const std::string& key) { return shards_[std::hash<std::string>{}(key) % shard_count]; }

    std::size_t max_per_shard_;
    std::array<Shard, shard_count> shards_;
    std::atomic<std::uint64_t> hits_{0};
    std::atomic<std::uint64_t> generation_{0};  // bumped by every forget() and clear()
};

/// A Store that consults a DenialCache before the store it wraps.
class CachingStore final : public Store {
public:
    CachingStore(Store& inner, DenialCache& cache) : inner_(inner), cache_(cache) {}

    boost::asio::awaitable<result<check::Verdict>> apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) override;
    /// A cached denial, or what the inner store decides at once; nothing otherwise (apply()
    /// then asks, and remembers a denial).
    std::optional<result<check::Verdict>> try_apply_now(const policy::Policy& p, const std::string& key,
                                                        std::uint32_t cost,
                                                        std::chrono::steady_clock::time_point now) override;
    /// apply() without the lookup its try_apply_now made at this instant (and missed): the
    /// inner store's answer, a denial remembered. One lookup per check.
    boost::asio::awaitable<result<check::Verdict>> apply_declined(const policy::Policy& p, std::string key,
                                                                  std::uint32_t cost) override;
    /// apply_declined(), the inner store's verdict written into `out` (apply_into) and
    /// remembered from there.
    boost::asio::awaitable<result<void>> apply_declined_into(const policy::Policy& p, std::string key,
                                                             std::uint32_t cost, check::Verdict& out) override;
    /// Layered checks go straight to the inner store: a cached denial of one key could not
    /// report the other limits' windows. A refund (gives_back) forgets its keys here before
    /// and after, as reset() does.
    boost::asio::awaitable<result<check::Verdict>> apply_all(std::vector<LimitCheck> checks) override;
    boost::asio::awaitable<result<check::Verdict>> peek(const policy::Policy& p, std::string key) override;
    /// Forgets the key here before and after the store's reset (a check in flight meanwhile
    /// is not kept: see DenialCache); the store tells the other sidecars.
    boost::asio::awaitable<result<bool>> reset(std::string key) override;
    /// Leases are never cached (apply passes concurrency checks through): straight through.
    boost::asio::awaitable<result<check::Verdict>> release(const policy::Policy& p, std::string key,
                                                           std::string lease) override {
        return inner_.release(p, std::move(key), std::move(lease));
    }
    boost::asio::awaitable<bool> ready() override { return inner_.ready(); }
    std::string describe() const override { return inner_.describe(); }

private:
    Store& inner_;
    DenialCache& cache_;
};

}  // namespace ratelimitd::store
