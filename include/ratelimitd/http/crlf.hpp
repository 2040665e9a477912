#pragma once
#include <string_view>

namespace ratelimitd::http {

/// HTTP/1.1's line end, after the start line, each field and the field block.
inline constexpr std::string_view crlf = "\r\n";

}  // namespace ratelimitd::http
