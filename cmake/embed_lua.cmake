# Writes OUT: a C++ file holding every lua/*.lua as a string, so the binary runs from any
# directory. Called by the build with -DOUT=... -DLUA_DIR=... -DALGORITHM_HEADER=... -DARGS_HEADER=...
#
# The algorithms are described once, as the enumerators of policy::Algorithm and the rows of
# policy::algorithm_table (ALGORITHM_HEADER, algorithm.hpp); the argument layout once, as
# args_per_check, args_per_policy, args_per_batch_check and reply_per_check (ARGS_HEADER,
# script_args.hpp).
# Directives write them into the scripts that combine the algorithms (lua/batch.lua,
# lua/multi.lua, lua/refund.lua):
#   --@algorithms       every algorithm's lua/NAME.lua pasted in as `local NAME = function(KEYS,
#                       ARGV) ... end`, then `local algorithms = { NAME = NAME, ... }`
#   --@args_per_check   `local args_per_check = N`
#   --@batch_layout     `local args_per_policy = N`, `local args_per_batch_check = M` and
#                       `local reply_per_check = R`
#   --@notify           lua/notify/crossings.lua: the quota webhooks' crossing test and claim
#   --@cluster_refunds  `local cluster_refunds = { NAME = true, ... }`: the rows with a cluster
#                       refund (.cluster_refund other than ClusterRefund::none)
#   --@own_counter_windows (in lua/notify/crossings.lua) `local own_counter_windows = { NAME =
#                       true, ... }`: the rows whose .notify_window is NotifyWindow::own_counter
# The build fails when the table and the enum disagree, when a row has no lua/NAME.lua, or when
# a row with a cluster refund has no "refund" mode in its script (`if mode == 'refund' then`),
# or one without has one.

file(READ ${ALGORITHM_HEADER} algorithm_text)
if(NOT algorithm_text MATCHES "enum class Algorithm {([^}]*)}")
  message(FATAL_ERROR "${ALGORITHM_HEADER}: no `enum class Algorithm { ... }` found")
endif()
string(REGEX REPLACE "[ \t\r\n]" "" enumerators "${CMAKE_MATCH_1}")
if(enumerators MATCHES "=")
  # algorithm_table is indexed by the enumerator's value.
  message(FATAL_ERROR "${ALGORITHM_HEADER}: policy::Algorithm enumerators must not set values")
endif()
string(REPLACE "," ";" enumerators "${enumerators}")
list(FILTER enumerators EXCLUDE REGEX "^$")

# The rows of algorithm_table: `{.algorithm = Algorithm::NAME, .name = "NAME", ...}`.
if(NOT algorithm_text MATCHES "algorithm_table\\[\\] = {([^;]*)};")
  message(FATAL_ERROR "${ALGORITHM_HEADER}: no `algorithm_table[] = { ... };` found")
endif()
string(REGEX MATCHALL "{\\.algorithm = [^{}]*}" rows "${CMAKE_MATCH_1}")
set(algorithms "")
set(cluster_refunds "")
set(own_counter_windows "")
foreach(row ${rows})
  if(NOT row MATCHES "\\.name = \"([a-z0-9_]+)\"")
    message(FATAL_ERROR "${ALGORITHM_HEADER}: a row of algorithm_table without `.name = \"NAME\"`: ${row}")
  endif()
  set(name ${CMAKE_MATCH_1})
  if(NOT row MATCHES "\\.algorithm = Algorithm::${name},")
    message(FATAL_ERROR "${ALGORITHM_HEADER}: the row named ${name} is not the row of Algorithm::${name}")
  endif()
  list(APPEND algorithms ${name})
  if(NOT row MATCHES "\\.cluster_refund = ClusterRefund::([a-z_]+)")
    message(FATAL_ERROR "${ALGORITHM_HEADER}: the row of ${name} has no `.cluster_refund = ClusterRefund::...`")
  endif()
  if(NOT CMAKE_MATCH_1 STREQUAL "none")
    list(APPEND cluster_refunds ${name})
  endif()
  if(NOT row MATCHES "\\.notify_window = NotifyWindow::(own_counter|aligned)")
    message(FATAL_ERROR "${ALGORITHM_HEADER}: the row of ${name} has no `.notify_window = NotifyWindow::...`")
  endif()
  if(CMAKE_MATCH_1 STREQUAL "own_counter")
    list(APPEND own_counter_windows ${name})
  endif()
endforeach()
if(NOT algorithms STREQUAL enumerators)
  message(FATAL_ERROR "${ALGORITHM_HEADER}: algorithm_table must have one row per policy::Algorithm, in the "
                      "enum's order: the enum has ${enumerators}, the table ${algorithms}")
endif()

# Every script the table promises: lua/NAME.lua, with its "refund" mode (used by lua/refund.lua)
# when the row has a cluster refund, and without one when it has none.
foreach(fn ${algorithms})
  if(NOT EXISTS ${LUA_DIR}/${fn}.lua)
    message(FATAL_ERROR "policy::Algorithm::${fn} has no script: add lua/${fn}.lua")
  endif()
  file(READ ${LUA_DIR}/${fn}.lua fn_text)
  string(FIND "${fn_text}" "\nif mode == 'refund' then\n" at)
  list(FIND cluster_refunds ${fn} refundable)
  if(NOT refundable EQUAL -1 AND at EQUAL -1)
    message(FATAL_ERROR "algorithm_table says ${fn} has a cluster refund, but lua/${fn}.lua has no "
                        "`if mode == 'refund' then` (the charge lua/refund.lua gives back)")
  elseif(refundable EQUAL -1 AND NOT at EQUAL -1)
    message(FATAL_ERROR "lua/${fn}.lua has a refund mode, but algorithm_table says ${fn} has no cluster refund "
                        "(ClusterRefund::none): one of them is wrong")
  endif()
endforeach()

file(READ ${ARGS_HEADER} args_text)
# The strides script_args.hpp writes (and FlatReply reads), pasted into the scripts below.
foreach(stride args_per_check args_per_policy args_per_batch_check reply_per_check)
  if(NOT args_text MATCHES "${stride} = ([0-9]+);")
    message(FATAL_ERROR "${ARGS_HEADER}: no `${stride} = N;` found")
  endif()
  set(${stride} ${CMAKE_MATCH_1})
endforeach()

set(functions "")
set(table "local algorithms = {\n")
foreach(fn ${algorithms})
  file(READ ${LUA_DIR}/${fn}.lua fn_text)
  string(APPEND functions "local ${fn} = function(KEYS, ARGV)\n${fn_text}end\n")
  string(APPEND table "  ${fn} = ${fn},\n")
endforeach()
string(APPEND table "}")
set(refundable "local cluster_refunds = {\n")
foreach(fn ${cluster_refunds})
  string(APPEND refundable "  ${fn} = true,\n")
endforeach()
string(APPEND refundable "}")

set(own_counter_table "local own_counter_windows = {\n")
foreach(fn ${own_counter_windows})
  string(APPEND own_counter_table "  ${fn} = true,\n")
endforeach()
string(APPEND own_counter_table "}")
file(READ ${LUA_DIR}/notify/crossings.lua notify_text)
if(NOT notify_text MATCHES "--@own_counter_windows\n")
  message(FATAL_ERROR "lua/notify/crossings.lua has no --@own_counter_windows line")
endif()
string(REPLACE "--@own_counter_windows\n" "${own_counter_table}\n" notify_text "${notify_text}")

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
  string(REPLACE "--@batch_layout\n"
                 "local args_per_policy = ${args_per_policy}\nlocal args_per_batch_check = ${args_per_batch_check}\nlocal reply_per_check = ${reply_per_check}\n"
                 text "${text}")
  string(REPLACE "--@cluster_refunds\n" "${refundable}\n" text "${text}")
  string(REPLACE "--@notify\n" "${notify_text}" text "${text}")
  string(APPEND body "        {\"${name}\", R\"rl_lua(${text})rl_lua\"},\n")
endforeach()
string(APPEND body "    };\n    return all;\n}\n\n")
string(APPEND body "const std::vector<std::string_view>& algorithm_names() {\n")
string(APPEND body "    static const std::vector<std::string_view> all = {\n")
foreach(fn ${enumerators})
  string(APPEND body "        \"${fn}\",\n")
endforeach()
string(APPEND body "    };\n    return all;\n}\n\n")
string(APPEND body "const std::vector<std::string_view>& cluster_refund_names() {\n")
string(APPEND body "    static const std::vector<std::string_view> all = {\n")
foreach(fn ${cluster_refunds})
  string(APPEND body "        \"${fn}\",\n")
endforeach()
string(APPEND body "    };\n    return all;\n}\n\n}  // namespace ratelimitd::store::redis\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
