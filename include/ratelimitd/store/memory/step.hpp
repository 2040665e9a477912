// What the step of every algorithm works with: the scripts' integer rounding, the reply, and
// the map of entries it reads and writes (entry.hpp). Internal to src/store/memory.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <boost/unordered/unordered_flat_map.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace ratelimitd::store::memory::detail {

using policy::Algorithm;
using policy::Policy;

// Integer rounding with the results of the scripts' math.ceil / math.floor of a double
// quotient: every operand stays below 2^53 (the config loader guarantees it), where the
// double quotient of two integers never rounds across an integer, so these are exact.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {  // b > 0
    return a / b + ((a % b) > 0 ? 1 : 0);
}
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {  // b > 0
    return a / b - ((a % b) < 0 ? 1 : 0);
}

// What each algorithm decides; the reply's seconds are derived from it in one place, as the
// last lines of every script do.
struct Reply {
    bool allowed = false;
    std::int64_t remaining = 0;
    std::int64_t reset_ms = 0;  // absolute, epoch ms
    std::string lease;          // concurrency: the id of the lease an admit took
    std::int64_t debt = 0;      // a report's: the units owed past the limit after it (the scripts' 2nd value)
    std::int64_t delay_ms = 0;  // a reserved admit (Policy::queue_units): ms before it goes ahead
};

/// The hash of a key: the one hash a check computes (it picks the shard and the map's slot).
inline std::size_t key_hash(std::string_view key) noexcept { return std::hash<std::string_view>{}(key); }

/// A key with its hash, computed once per key and check: the store picks the shard by it and
/// every lookup of the key in that shard's map reuses it.
struct Key {
    explicit Key(const std::string& key) : text(key), hash(key_hash(key)) {}
    const std::string& text;
    std::size_t hash;
};

/// A key as the map holds it: up to 48 bytes (every key of a usual prefix, policy, address
/// and scope) inside the map's slot, so that comparing it reads the cache line the lookup has
/// just read; a longer one on the heap.
class StoredKey {
public:
    explicit StoredKey(std::string_view key) : size_(key.size()) {
        if (size_ > inline_capacity) heap_ = std::make_unique<char[]>(size_);
        if (size_ > 0) std::memcpy(data(), key.data(), size_);
    }
    StoredKey(const StoredKey& other) : StoredKey(other.view()) {}
    StoredKey(StoredKey&& other) noexcept : size_(other.size_), heap_(std::move(other.heap_)) {
        if (size_ <= inline_capacity && size_ > 0) std::memcpy(inline_, other.inline_, size_);
        other.size_ = 0;
    }
    StoredKey& operator=(const StoredKey& other) {
        if (this != &other) *this = StoredKey(other.view());
        return *this;
    }
    StoredKey& operator=(StoredKey&& other) noexcept {
        size_ = other.size_;
        heap_ = std::move(other.heap_);
        if (size_ <= inline_capacity && size_ > 0) std::memcpy(inline_, other.inline_, size_);
        if (this != &other) other.size_ = 0;
        return *this;
    }
    ~StoredKey() = default;

    [[nodiscard]] std::string_view view() const noexcept {
        return {size_ > inline_capacity ? heap_.get() : inline_, size_};
    }

private:
    static constexpr std::size_t inline_capacity = 48;
    char* data() noexcept { return size_ > inline_capacity ? heap_.get() : inline_; }

    std::size_t size_;
    std::unique_ptr<char[]> heap_;
    char inline_[inline_capacity];
};

/// The map's hash and equality, which also take a Key (the lookups: no hashing again).
struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(const StoredKey& key) const noexcept { return key_hash(key.view()); }
    std::size_t operator()(const Key& key) const noexcept { return key.hash; }
};
struct KeyEqual {
    using is_transparent = void;
    bool operator()(const StoredKey& a, const StoredKey& b) const noexcept { return a.view() == b.view(); }
    bool operator()(const StoredKey& a, const Key& b) const noexcept { return a.view() == b.text; }
    bool operator()(const Key& a, const StoredKey& b) const noexcept { return a.text == b.view(); }
};

struct Entry;  // entry.hpp: its state is one of the steps' (algorithm_steps.hpp)
/// Open addressing, entries and their keys in the slot array: a lookup touches the slot's
/// group and the slot, not a bucket, a node and a key elsewhere.
using Map = boost::unordered_flat_map<StoredKey, Entry, KeyHash, KeyEqual>;

/// One mode of one algorithm: the script deciding `cost` units (0: peek) of `p` on `key` at
/// `now` (epoch ms), or its report mode charging `cost` signed units.
using AlgorithmStep = Reply (*)(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now);

}  // namespace ratelimitd::store::memory::detail
