// A Prometheus label value as the text exposition format writes it.
#pragma once

#include <string>
#include <string_view>

namespace ratelimitd {

/// `text` with backslash and double quote escaped by a backslash and newline written as \n,
/// the three escapes the exposition format defines; every other byte as it is.
[[nodiscard]] std::string escape_label_value(std::string_view text);

}  // namespace ratelimitd
