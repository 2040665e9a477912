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
// Buckets scanned at most for that sample (a map has about one bucket per entry).
constexpr std::size_t eviction_scan_buckets = 32;

struct alignas(64) Shard {
    mutable std::mutex mutex;
    Map map;
    std::size_t sweep_cursor = 0;  // next bucket of the incremental sweep (and eviction sample)
    std::size_t max_keys = std::numeric_limits<std::size_t>::max();  // its share of the cap
};

// Drops the expired entries of bucket `bucket`. Keys are copied before erasing because
// erase(key) must not be handed a reference into the node it destroys.
std::size_t sweep_bucket(Map& map, std::size_t bucket, std::int64_t now);

// Brings `shard` back to its max_keys after a write. Expired entries go first: those in a
// sample of buckets at the sweep cursor (so successive samples move over the whole map) are
// dropped. With none, the sampled entry nearest its expiry is evicted: the one whose state
// was soonest to go anyway, so forgetting it gives back the least quota (a token bucket
// nearest to full, a window nearest to its end). `keep(key)` marks the keys just written,
// which are never chosen. Returns the number of live entries evicted.
template <class Keep>
std::size_t trim(Shard& shard, std::int64_t now, const Keep& keep) {
    Map& map = shard.map;
    std::size_t evicted = 0;
    while (map.size() > shard.max_keys) {
        // Pointers to keys, erased through find(): erase(key) must not be handed a reference
        // into the node it destroys, and erasing one node leaves the others' keys in place.
        std::array<const std::string*, eviction_sample> expired_keys{};
        std::size_t n_expired = 0;
        const std::string* victim = nullptr;
        std::int64_t victim_expiry = 0;
        std::size_t seen = 0;
        const std::size_t buckets = map.bucket_count();
        for (std::size_t b = 0; b < std::min(buckets, eviction_scan_buckets) && seen < eviction_sample; ++b) {
            if (shard.sweep_cursor >= buckets) shard.sweep_cursor = 0;
            const std::size_t bucket = shard.sweep_cursor++;
            for (auto it = map.begin(bucket); it != map.end(bucket) && seen < eviction_sample; ++it, ++seen) {
                if (keep(it->first)) continue;
                if (expired(it->second, now)) {
                    expired_keys[n_expired++] = &it->first;
                } else if (victim == nullptr || it->second.expire_at < victim_expiry) {
                    victim = &it->first;
                    victim_expiry = it->second.expire_at;
                }
            }
        }
        if (n_expired > 0) {
            for (std::size_t i = 0; i < n_expired; ++i) map.erase(map.find(*expired_keys[i]));
            continue;
        }
        if (victim == nullptr) {
            // The sampled buckets held only kept keys: any other key will do.
            for (const auto& kv : map) {
                if (!keep(kv.first)) {
                    victim = &kv.first;
                    break;
                }
            }
            if (victim == nullptr) break;  // nothing but the keys just written
        }
        map.erase(map.find(*victim));
        ++evicted;
    }
    return evicted;
}

}  // namespace ratelimitd::store::memory::detail
