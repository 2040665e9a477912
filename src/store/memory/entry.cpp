// Finding and creating entries, as the scripts' first lines do.
#include "ratelimitd/store/memory/entry.hpp"

#include <utility>

namespace ratelimitd::store::memory::detail {
namespace {

// Index of the variant alternative that holds an algorithm's state (Steps, algorithm_steps.hpp:
// in the enum's order).
std::size_t state_index(Algorithm a) { return static_cast<std::size_t>(a); }

// Makes `state` hold a fresh alternative `index`.
template <std::size_t... I>
void emplace_state(AlgorithmState& state, std::size_t index, std::index_sequence<I...>) {
    ((index == I ? (void)state.emplace<I>() : (void)0), ...);
}

}  // namespace

Entry* find_live(Map& map, const Key& key, Algorithm algorithm, std::int64_t now) {
    auto it = map.find(key);
    if (it == map.end() || expired(it->second, now) || it->second.state.index() != state_index(algorithm)) {
        return nullptr;
    }
    return &it->second;
}

Entry& insert(Map& map, const Key& key, Algorithm algorithm) {
    auto it = map.find(key);  // the slot find_live just looked at: no hashing, in cache
    if (it == map.end()) it = map.try_emplace(StoredKey(key.text)).first;
    Entry& e = it->second;
    e.expire_at = 0;
    emplace_state(e.state, state_index(algorithm), std::make_index_sequence<std::variant_size_v<AlgorithmState>>{});
    return e;
}

}  // namespace ratelimitd::store::memory::detail
