// ERL mode's registry: envoyproxy/ratelimit's runtime directory (RUNTIME_*
// variables) listed as its file provider lists it, and read through the
// ordinary loader as a config tree of the ordinary schema (envoy_config:
// [files], envoy_denied_calls, envoy_merge_domains).
#pragma once

#include "ratelimitd/erl/erl_environment.hpp"
#include "ratelimitd/policy/policy.hpp"

#include <string>
#include <vector>

namespace ratelimitd::erl {

/// The config files of `layout`, sorted, as envoyproxy/ratelimit loads them:
/// every file below root/subdirectory whose path (with '/' read as '.') starts
/// with "<app_directory>." when watch_root, else every file below
/// root/subdirectory/app_directory; names starting with '.' skipped
/// (directories too) with ignore_dot_files; symlinked files followed, symlinked
/// directories not entered (a ConfigMap's `..data` is reached through its file
/// links). Throws policy::ConfigError naming the directory when it cannot be
/// read.
std::vector<std::string> runtime_config_files(const RuntimeLayout& layout);

/// The config tree (JSON text) ERL mode loads: the files, MERGE_DOMAIN_CONFIG
/// and STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT in the ordinary schema; in xDS
/// mode no files.
std::string erl_config_text(const ErlMode& mode, const std::vector<std::string>& files);

/// Lists the runtime directory and loads it (policy::parse_config). Throws
/// policy::ConfigError.
policy::Config load_erl_config(const ErlMode& mode);

/// The name messages and /v1/policies give ERL mode's config.
inline constexpr const char* erl_config_name = "erl-environment.json";

/// The directory to watch: RUNTIME_ROOT's parent when watch_root (a swap of the
/// root symlink), else the config directory itself.
std::string watched_directory(const RuntimeLayout& layout);

}  // namespace ratelimitd::erl
