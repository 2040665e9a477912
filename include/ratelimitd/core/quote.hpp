// Quoting caller- or file-supplied text for error messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ratelimitd {

/// The text in double quotes, cut to `max_bytes` (then "..."), with bytes outside printable
/// ASCII and '"', '\' written as \xNN, so a message never carries raw control bytes into a
/// terminal, a log line or a JSON body.
std::string quote(std::string_view text, std::size_t max_bytes = 64);

}  // namespace ratelimitd
