// Reads a YAML or JSON config file into a validated Config.
#pragma once

#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/policy.hpp"

#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// Loads and fully validates the file at `path` (.yaml, .yml or .json, same schema).
/// Throws ConfigError on the first problem found (unreadable file, syntax error, unknown
/// key, bad value, a route naming a missing policy, ...).
Config load_config(const std::string& path);

/// The same for text already in memory; `file_name` is used in messages and decides the
/// syntax by its extension. Throws ConfigError.
Config parse_config(std::string_view text, const std::string& file_name);

}  // namespace ratelimitd::policy
