// The release half of lua/concurrency.lua in C++ (the check half is Concurrency::check).
// Internal to src/store/memory.
#pragma once

#include "ratelimitd/store/memory/entry.hpp"

#include <cstdint>
#include <string>

namespace ratelimitd::store::memory::detail {

/// concurrency.lua with ARGV[6] = "release": frees lease `id` of `p` on `key` at `now`.
/// Reply::allowed is true when a live lease was freed; the numbers are the state after it.
Reply release_lease(Map& map, const Key& key, const Policy& p, const std::string& id, std::int64_t now);

}  // namespace ratelimitd::store::memory::detail
