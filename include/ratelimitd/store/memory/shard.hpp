// One of the embedded store's 64 locked maps, and how a full or stale one is trimmed.
// Internal to src/store/memory.
#pragma once

#include "ratelimitd/store/memory/entry.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <mutex>
#include <string>

namespace ratelimitd::store::memory::detail {

// 64 shards keep two threads on different keys off each other's lock (see
// bench/memory_store_bytes.md); each shard sits on its own cache lines.
constexpr std::size_t shard_count = 64;

// Entries a full shard looks at to choose what to drop: a sample, as Redis's eviction does,
// so a new key costs a bounded number of steps however large the shard is.
constexpr std::size_t eviction_sample = 8;

struct alignas(64) Shard {
    mutable std::mutex mutex;
    Map map;
    std::size_t max_keys = std::numeric_limits<std::size_t>::max();  // its share of the cap
};

// Brings `shard` back to its max_keys after a write. Expired entries go first: those among the
// first entries of the map (a sample) are dropped. With none, the sampled entry nearest its
// expiry is evicted: the one whose state was soonest to go anyway, so forgetting it gives back
// the least quota (a token bucket nearest to full, a window nearest to its end). The map's
// slot order is its keys' hashes', so the sample is a random one that changes as keys come and
// go. `keep(key)` marks the keys just written, which are never chosen. Returns the number of
// live entries evicted.
template <class Keep>
std::size_t trim(Shard& shard, std::int64_t now, const Keep& keep) {
    Map& map = shard.map;
    std::size_t evicted = 0;
    while (map.size() > shard.max_keys) {
        // Erasing one entry of an open-addressing map leaves the others in place: the
        // iterators of the sample stay valid while the expired ones are erased.
        std::array<Map::iterator, eviction_sample> expired_entries{};
        std::size_t n_expired = 0;
        auto victim = map.end();
        std::size_t seen = 0;
        for (auto it = map.begin(); it != map.end() && seen < eviction_sample; ++it, ++seen) {
            if (keep(it->first.view())) continue;
            if (expired(it->second, now)) {
                expired_entries[n_expired++] = it;
            } else if (victim == map.end() || it->second.expire_at < victim->second.expire_at) {
                victim = it;
            }
        }
        if (n_expired > 0) {
            for (std::size_t i = 0; i < n_expired; ++i) map.erase(expired_entries[i]);
            continue;
        }
        if (victim == map.end()) {
            // The sample held only kept keys: any other key will do.
            for (auto it = map.begin(); it != map.end(); ++it) {
                if (!keep(it->first.view())) {
                    victim = it;
                    break;
                }
            }
            if (victim == map.end()) break;  // nothing but the keys just written
        }
        map.erase(victim);
        ++evicted;
    }
    return evicted;
}

}  // namespace ratelimitd::store::memory::detail
