// The incremental sweep of one bucket.
#include "ratelimitd/store/memory/shard.hpp"

namespace ratelimitd::store::memory::detail {

std::size_t sweep_bucket(Map& map, std::size_t bucket, std::int64_t now) {
    std::array<std::string, 4> doomed;
    std::size_t n = 0;
    std::size_t dropped = 0;
    for (auto it = map.begin(bucket); it != map.end(bucket); ++it) {
        if (expired(it->second, now)) {
            doomed[n++] = it->first;
            if (n == doomed.size()) break;  // the rest waits for the next pass
        }
    }
    for (std::size_t i = 0; i < n; ++i) dropped += map.erase(doomed[i]);
    return dropped;
}

}  // namespace ratelimitd::store::memory::detail
