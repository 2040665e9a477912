// Precedence over the settings table: command line > RATELIMITD_* environment > config file >
// default, each value checked by its row's rules.
#pragma once

#include "ratelimitd/config/command_line.hpp"
#include "ratelimitd/config/settings.hpp"
#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/error.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::config {

/// Looks up an environment variable; nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

/// The process settings of the config file's top level: every row with a file key that the
/// tree holds, checked in table order. Fails with "<key>: <what was expected>" (the caller
/// adds the file name); other keys are left to the caller. Never throws.
result<FileSettings> read_file_settings(const ConfigTree& root);

/// The top-level keys the table reads from the file, in table order.
std::vector<std::string_view> file_setting_keys();

/// Applies precedence to every row, starting from `defaults`: a flag wins over its variable
/// (an empty variable counts as unset), the variable over `file`, the file over the default.
/// The first bad value fails with a message naming the setting. The config path comes from
/// --check-config, --config or RATELIMITD_CONFIG. Never throws.
result<Settings> apply_precedence(const CommandLine& cl, const FileSettings& file, const EnvLookup& env,
                                  const Settings& defaults = {});

/// The text the flag `--<flag>` or its variable gives (not the file), needed before the file is
/// read; nothing when neither is set.
std::optional<std::string> setting_text(std::string_view flag, const CommandLine& cl, const EnvLookup& env);

/// The text of the setting whose variable is `env_name` (a setting of no flag: a secret, read
/// by a command that resolves no other setting), checked as its row checks it; nothing when
/// unset. An unknown name is nothing too.
result<std::optional<std::string>> env_setting(std::string_view env_name, const EnvLookup& env);

/// The config path alone (--check-config, else --config, else RATELIMITD_CONFIG), needed
/// before the file is read.
std::optional<std::string> config_path(const CommandLine& cl, const EnvLookup& env);

}  // namespace ratelimitd::config
