// Log set-up: one line per event on stderr, as text or JSON.
#pragma once

#include <string_view>

namespace ratelimitd::app {

/// Installs the default spdlog logger: stderr, flushed on every line, at `level`
/// (trace|debug|info|warn|error), as "text" (timestamp level message) or "json"
/// ({"ts":..., "level":..., "msg":...}, the message JSON-escaped).
void setup_logging(std::string_view level, std::string_view format);

}  // namespace ratelimitd::app
