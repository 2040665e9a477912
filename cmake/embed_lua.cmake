# Writes OUT: a C++ file holding every lua/*.lua as a string, so the binary runs from any
# directory. Called by the build with -DOUT=... -DLUA_DIR=... -DPOLICY_HEADER=... -DARGS_HEADER=...
#
# The algorithms are registered once, as the enumerators of policy::Algorithm (POLICY_HEADER);
# the argument layout once, as args_per_check (ARGS_HEADER, script_args.hpp). Two directives
# write them into the scripts that combine the algorithms (lua/batch.lua, lua/multi.lua):
#   --@algorithms      every algorithm's lua/NAME.lua pasted in as `local NAME = function(KEYS,
#                      ARGV) ... end`, then `local algorithms = { NAME = NAME, ... }`
#   --@args_per_check  `local args_per_check = N`
# An enumerator without its lua/NAME.lua fails the build.

file(READ ${POLICY_HEADER} policy_text)
if(NOT policy_text MATCHES "enum class Algorithm {([^}]*)}")
  message(FATAL_ERROR "${POLICY_HEADER}: no `enum class Algorithm { ... }` found")
endif()
string(REGEX REPLACE "[ \t\r\n]" "" enumerators "${CMAKE_MATCH_1}")
if(enumerators MATCHES "=")
  # algorithm_names() is indexed by the enumerator's value.
  message(FATAL_ERROR "${POLICY_HEADER}: policy::Algorithm enumerators must not set values")
endif()
string(REPLACE "," ";" algorithms "${enumerators}")
list(FILTER algorithms EXCLUDE REGEX "^$")

file(READ ${ARGS_HEADER} args_text)
if(NOT args_text MATCHES "args_per_check = ([0-9]+);")
  message(FATAL_ERROR "${ARGS_HEADER}: no `args_per_check = N;` found")
endif()
set(args_per_check ${CMAKE_MATCH_1})

set(functions "")
set(table "local algorithms = {\n")
foreach(fn ${algorithms})
  if(NOT EXISTS ${LUA_DIR}/${fn}.lua)
    message(FATAL_ERROR "policy::Algorithm::${fn} has no script: add lua/${fn}.lua")
  endif()
  file(READ ${LUA_DIR}/${fn}.lua fn_text)
  string(APPEND functions "local ${fn} = function(KEYS, ARGV)\n${fn_text}end\n")
  string(APPEND table "  ${fn} = ${fn},\n")
endforeach()
string(APPEND table "}")

file(GLOB scripts ${LUA_DIR}/*.lua)
list(SORT scripts)
set(body "// Generated from lua/*.lua by cmake/embed_lua.cmake. Do not edit.\n")
string(APPEND body "#include \"ratelimitd/store/redis/lua_sources.hpp\"\n\n")
string(APPEND body "namespace ratelimitd::store::redis {\n\n")
string(APPEND body "const std::vector<LuaSource>& lua_sources() {\n")
string(APPEND body "    static const std::vector<LuaSource> all = {\n")
foreach(script ${scripts})
  get_filename_component(name ${script} NAME_WE)
  file(READ ${script} text)
  string(REPLACE "--@algorithms\n" "${functions}${table}\n" text "${text}")
  string(REPLACE "--@args_per_check\n" "local args_per_check = ${args_per_check}\n" text "${text}")
  string(APPEND body "        {\"${name}\", R\"rl_lua(${text})rl_lua\"},\n")
endforeach()
string(APPEND body "    };\n    return all;\n}\n\n")
string(APPEND body "const std::vector<std::string_view>& algorithm_names() {\n")
string(APPEND body "    static const std::vector<std::string_view> all = {\n")
foreach(fn ${algorithms})
  string(APPEND body "        \"${fn}\",\n")
endforeach()
string(APPEND body "    };\n    return all;\n}\n\n}  // namespace ratelimitd::store::redis\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
