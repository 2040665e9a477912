// Quota webhooks in ERL mode: envoyproxy/ratelimit has no variable for a webhook target, so
// ratelimitd reads one of its own, RATELIMITD_ERL_NOTIFY_FILE, naming a file that holds the
// `notify:` section a native config file takes (docs/envoy.md, "Quota webhooks in ERL mode").
// The section joins ERL mode's config tree, so targets, secrets, thresholds and the labels of
// domain rules are read and refused by the very code that reads a native file's.
#pragma once

#include "ratelimitd/config/resolve.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/policy.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ratelimitd::erl {

/// The variable (set by whoever writes the Deployment, as every other variable of the pod).
inline constexpr std::string_view notify_file_variable = "RATELIMITD_ERL_NOTIFY_FILE";

/// The file's bound: a notify section of even a thousand targets and rules is far smaller.
inline constexpr std::size_t max_notify_file_bytes = 1024 * 1024;

/// RATELIMITD_ERL_NOTIFY_FILE's path, absolute (a relative one from `cwd`); "" when unset. An
/// empty value is refused (invalid_request) by name. Only the path: the file is read with the
/// config, at start and at each reload (runtime_directory.cpp).
[[nodiscard]] result<std::string> notify_file_path(const config::EnvLookup& env, const std::string& cwd);

/// `config_text` (ERL mode's config tree, JSON without a `notify` key) with the `notify:`
/// section of the file at `path` added. The file (.yaml, .yml or .json, as a native one) must be
/// a map whose one key is `notify`. Throws policy::ConfigError naming the variable and the file
/// (unreadable, too large, not YAML, another key); never echoes a value of the section.
[[nodiscard]] std::string with_notify_file(const std::string& config_text, const std::string& path);

/// Runs `load` (the parse of a tree with_notify_file made) and says a refusal of the `notify`
/// section of the file it came from: "RATELIMITD_ERL_NOTIFY_FILE <path>: notify.targets...".
/// Any other refusal passes unchanged.
policy::Config said_of_notify_file(const std::function<policy::Config()>& load, const std::string& path,
                                   std::string_view tree_name);

}  // namespace ratelimitd::erl
