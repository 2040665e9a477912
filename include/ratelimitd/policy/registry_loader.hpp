// Reads a YAML or JSON config file into a validated Config.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// A config that cannot be used. what() reads "<file>: <field path>: <what was expected>",
/// e.g. `ratelimitd.yaml: policies.login.window: expected a duration such as "500ms",
/// "60s" or "1m", got "60"`.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Loads and fully validates the file at `path` (.yaml, .yml or .json, same schema).
/// Throws ConfigError on the first problem found (unreadable file, syntax error, unknown
/// key, bad value, a route naming a missing policy, ...).
Config load_config(const std::string& path);

/// The same for text already in memory; `file_name` is used in messages and decides the
/// syntax by its extension. Throws ConfigError.
Config parse_config(std::string_view text, const std::string& file_name);

}  // namespace ratelimitd::policy
