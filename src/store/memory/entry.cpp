// Finding and creating entries, as the scripts' first lines do.
#include "ratelimitd/store/memory/entry.hpp"

namespace ratelimitd::store::memory::detail {
namespace {

// Index of the variant alternative that holds an algorithm's state.
std::size_t state_index(Algorithm a) {
    switch (a) {
        case Algorithm::token_bucket: return 0;
        case Algorithm::sliding_log: return 1;
        case Algorithm::fixed_window: return 2;
        case Algorithm::gcra: return 3;
        case Algorithm::sliding_window: return 4;
    }
    return 0;
}

}  // namespace

Entry* find_live(Map& map, const std::string& key, Algorithm algorithm, std::int64_t now) {
    auto it = map.find(key);
    if (it == map.end()) return nullptr;
    if (expired(it->second, now) || it->second.state.index() != state_index(algorithm)) {
        map.erase(it);
        return nullptr;
    }
    return &it->second;
}

Entry& insert(Map& map, const std::string& key, Algorithm algorithm) {
    Entry& e = map[key];
    switch (algorithm) {
        case Algorithm::token_bucket: e.state.emplace<TokenBucketState>(); break;
        case Algorithm::sliding_log: e.state.emplace<SlidingLogState>(); break;
        case Algorithm::fixed_window: e.state.emplace<FixedWindowState>(); break;
        case Algorithm::gcra: e.state.emplace<GcraState>(); break;
        case Algorithm::sliding_window: e.state.emplace<SlidingWindowState>(); break;
    }
    return e;
}

}  // namespace ratelimitd::store::memory::detail
