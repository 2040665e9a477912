# Writes OUT: a C++ file defining `std::string_view NAMESPACE::FUNCTION()` that returns the
# bytes of IN, so the binary serves the file without reading the disk (the status page).
# Called by the build with -DIN=... -DOUT=... -DNAMESPACE=... -DFUNCTION=... -DHEADER=...
#
# The text goes into a raw string literal; a file holding its delimiter fails the build rather
# than ending the literal early.
file(READ ${IN} text)
set(delimiter "rl_embed")
if(text MATCHES "\\)${delimiter}\"")
  message(FATAL_ERROR "${IN} contains )${delimiter}\", which would end the embedded literal")
endif()
set(body "// Generated from ${IN} by cmake/embed_text.cmake. Do not edit.\n")
string(APPEND body "#include \"${HEADER}\"\n\n")
string(APPEND body "namespace ${NAMESPACE} {\n\n")
string(APPEND body "std::string_view ${FUNCTION}() noexcept {\n")
string(APPEND body "    static constexpr std::string_view text = R\"${delimiter}(${text})${delimiter}\";\n")
string(APPEND body "    return text;\n}\n\n}  // namespace ${NAMESPACE}\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
