// Log set-up: one line per event on stderr, as text or JSON.
#pragma once

#include <spdlog/formatter.h>

#include <memory>
#include <string_view>

namespace ratelimitd::app {

/// Installs the default spdlog logger: stderr, flushed on every line, at `level`
/// (trace|debug|info|warn|error), as "text" (timestamp level message) or "json"
/// ({"ts":..., "level":..., "msg":..., then each key=value of the message as a member:
/// split_log_message), every string JSON-escaped.
void setup_logging(std::string_view level, std::string_view format);

/// The line formatter setup_logging installs for `format` ("json", else text); on its own so
/// a test can format a message without a process-wide logger.
std::unique_ptr<spdlog::formatter> make_log_formatter(std::string_view format);

}  // namespace ratelimitd::app
