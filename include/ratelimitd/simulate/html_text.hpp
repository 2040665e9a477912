// Text from the log or the configs, made safe to place in the HTML report's markup.
#pragma once

#include <string>
#include <string_view>

namespace ratelimitd::simulate {

/// `s` with & < > " ' as entities: safe in element text and in quoted attribute values.
std::string html_escape(std::string_view s);

}  // namespace ratelimitd::simulate
