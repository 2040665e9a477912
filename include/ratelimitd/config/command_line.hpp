// The command line as given, before precedence is applied: the flags are the table's.
#pragma once

#include "ratelimitd/core/error.hpp"

#include <map>
#include <string>

namespace ratelimitd::config {

enum class Command { serve, check_config, version, help };

struct CommandLine {
    Command command = Command::serve;
    std::string file;                           ///< --check-config FILE
    std::map<std::string, std::string> flags;   ///< "listen" -> "127.0.0.1:0", ...
    /// --erl-env: configured by envoyproxy/ratelimit's environment (as when started as `ratelimit`).
    bool erl_env = false;
};

/// Parses `--flag value` and `--flag=value` for every flag of the settings table, plus
/// --check-config FILE, --erl-env, --help (-h) and --version. Unknown flags and missing values fail with
/// a message naming the flag. Never throws.
result<CommandLine> parse_command_line(int argc, const char* const* argv);

}  // namespace ratelimitd::config
