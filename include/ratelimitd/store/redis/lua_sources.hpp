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

}  // namespace ratelimitd::store::redis
