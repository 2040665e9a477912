// Reads a YAML or JSON config file into a validated Config.
#pragma once

#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/policy.hpp"

#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// What the caller knows before reading the file.
struct LoadOptions {
    /// xds_server is set (by a flag or the environment; the file's own `xds_server:` counts too):
    /// the Envoy domains come from the control plane, so the file needs no policies, and
    /// `domains:` / `envoy_config:` would be a second source and are refused.
    bool envoy_rules_from_xds = false;
};

/// Loads and fully validates the file at `path` (.yaml, .yml or .json, same schema).
/// Throws ConfigError on the first problem found (unreadable file, syntax error, unknown
/// key, bad value, a route naming a missing policy, ...).
Config load_config(const std::string& path, const LoadOptions& options = {});

/// The same for text already in memory; `file_name` is used in messages and decides the
/// syntax by its extension. Throws ConfigError.
Config parse_config(std::string_view text, const std::string& file_name, const LoadOptions& options = {});

}  // namespace ratelimitd::policy
