// IdleBuckets: each bucket's quiet time, from the reports' time_elapsed.
#include "ratelimitd/grpc/idle_buckets.hpp"

#include <string_view>

namespace ratelimitd::rls {

std::uint64_t IdleBuckets::hash_of(const policy::RlqsBucketId& id) noexcept {
    // FNV-1a over "key\0value\0" of each pair: the separators keep ("ab","c") from ("a","bc").
    std::uint64_t h = 14695981039346656037ULL;
    const auto mix = [&h](std::string_view text) {
        for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
        h = (h ^ 0U) * 1099511628211ULL;
    };
    for (const auto& [key, value] : id) {
        mix(key);
        mix(value);
    }
    return h;
}

bool IdleBuckets::quiet_for(const policy::RlqsBucketId& id, bool used, std::chrono::milliseconds elapsed,
                            std::chrono::milliseconds idle_after) {
    const std::uint64_t h = hash_of(id);
    if (used) {
        quiet_.erase(h);
        return false;
    }
    auto it = quiet_.find(h);
    if (it == quiet_.end()) {
        if (quiet_.size() >= max_tracked) return false;
        it = quiet_.emplace(h, std::chrono::milliseconds{0}).first;
    }
    it->second += elapsed;
    if (it->second < idle_after) return false;
    quiet_.erase(it);
    return true;
}

}  // namespace ratelimitd::rls
