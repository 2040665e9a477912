# Writes OUT: config::store_url_schemes(), the URL schemes of every store backend, read from
# the backends' own sources (BACKENDS: a ;-list of src/store/**/*_backend.cpp). The config layer
# checks a `redis` value (file, flag, variable) below the store module, where no backend is
# linked; this way a new backend states its schemes once, in its own file, and nothing in the
# config layer changes. A backend declares them as
#     constexpr std::string_view NAME_schemes[] = {"scheme://", ...};
# (the form matched below); BackendKinds.TheSettingsTakeExactlyTheBackendsSchemes holds the
# generated list equal to the kinds' own.
set(schemes "")
foreach(source IN LISTS BACKENDS)
  file(READ ${source} text)
  string(REGEX MATCHALL "constexpr std::string_view [a-z_]+_schemes\\[\\] = {[^}]*}" lists "${text}")
  foreach(list IN LISTS lists)
    string(REGEX MATCHALL "\"[a-z+.-]+://\"" quoted "${list}")
    list(APPEND schemes ${quoted})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES schemes)
list(LENGTH schemes count)
if(count EQUAL 0)
  message(FATAL_ERROR "no store backend declares its URL schemes (NAME_schemes[] in src/store/**/*_backend.cpp)")
endif()
list(JOIN schemes ", " joined)
set(body "// Generated from src/store/**/*_backend.cpp by cmake/store_url_schemes.cmake. Do not edit.\n")
string(APPEND body "#include \"ratelimitd/config/setting_values.hpp\"\n\n#include <array>\n\n")
string(APPEND body "namespace ratelimitd::config {\n\n")
string(APPEND body "std::span<const std::string_view> store_url_schemes() noexcept {\n")
string(APPEND body "    static constexpr std::array<std::string_view, ${count}> schemes{${joined}};\n")
string(APPEND body "    return schemes;\n}\n\n}  // namespace ratelimitd::config\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
