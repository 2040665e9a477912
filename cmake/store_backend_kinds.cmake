# Writes OUT: store::registered_backend_kinds(), the registration of every store backend, read
# from the backends' own sources (BACKENDS: a ;-list of src/store/**/*_backend.cpp). A backend
# registers itself where it is written, as
#     namespace ratelimitd::store::KIND {
#     const BackendKind NAME_backend_kind{ ... };
# (the forms matched below: the file's first namespace, a kind at the start of a line), so a
# new backend is its folder's files and no line elsewhere. A kind the generated list names but
# the backend does not define fails the link; BackendKinds.EveryBackendSourceRegistersAKind
# holds the list to the sources.
set(declarations "")
set(pointers "")
set(count 0)
foreach(source IN LISTS BACKENDS)
  file(READ ${source} text)
  string(REGEX MATCHALL "\nconst BackendKind [a-z_]+_kind[ ]*{" kinds "${text}")
  if(NOT kinds)
    continue()
  endif()
  string(REGEX MATCH "namespace (ratelimitd::store[a-z_:]*) {" ns "${text}")
  if(NOT ns)
    message(FATAL_ERROR "${source} registers a backend kind outside a ratelimitd::store namespace")
  endif()
  set(namespace ${CMAKE_MATCH_1})
  string(APPEND declarations "namespace ${namespace} {\n")
  foreach(kind IN LISTS kinds)
    string(REGEX REPLACE "\nconst BackendKind ([a-z_]+_kind)[ ]*{" "\\1" name "${kind}")
    string(APPEND declarations "extern const BackendKind ${name};\n")
    string(APPEND pointers "    &::${namespace}::${name},\n")
    math(EXPR count "${count} + 1")
  endforeach()
  string(APPEND declarations "}  // namespace ${namespace}\n")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "no store backend registers a kind (const BackendKind NAME_kind{...} in src/store/**/*_backend.cpp)")
endif()
set(body "// Generated from src/store/**/*_backend.cpp by cmake/store_backend_kinds.cmake. Do not edit.\n")
string(APPEND body "#include \"ratelimitd/store/backend_kind.hpp\"\n\n#include <array>\n\n${declarations}\n")
string(APPEND body "namespace ratelimitd::store {\n\n")
string(APPEND body "std::span<const BackendKind* const> registered_backend_kinds() noexcept {\n")
string(APPEND body "    static constexpr std::array<const BackendKind*, ${count}> kinds{\n${pointers}    };\n")
string(APPEND body "    return kinds;\n}\n\n}  // namespace ratelimitd::store\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
