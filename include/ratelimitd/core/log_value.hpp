// Writing free text as one value of a `key="value"` log field.
#pragma once

#include <string>
#include <string_view>

namespace ratelimitd {

/// `text` in double quotes with '"' and '\' escaped by a backslash and bytes outside printable
/// ASCII as \xNN: one word to the log's field splitter (app/log_fields.hpp), which unquotes
/// it, whatever the text holds (spaces, '=', quotes, newlines).
std::string log_value(std::string_view text);

}  // namespace ratelimitd
