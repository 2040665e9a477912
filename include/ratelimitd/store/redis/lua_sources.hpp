// The Lua scripts of lua/*.lua, embedded at build time (cmake/embed_lua.cmake).
#pragma once

#include <string_view>
#include <vector>

namespace ratelimitd::store::redis {

struct LuaSource {
    std::string_view name;  ///< file name without ".lua", e.g. "token_bucket"
    std::string_view text;  ///< the script source
};

/// Every embedded script, sorted by name.
const std::vector<LuaSource>& lua_sources();

/// The enumerators of policy::Algorithm in declaration order (index == value), as the build
/// read them from algorithm.hpp to write the dispatch tables of lua/batch.lua and lua/multi.lua.
const std::vector<std::string_view>& algorithm_names();

/// The rows of policy::algorithm_table with a cluster refund, as the build read them when it
/// checked that lua/NAME.lua has a "refund" mode for each (lua/refund.lua runs it).
const std::vector<std::string_view>& cluster_refund_names();

}  // namespace ratelimitd::store::redis
