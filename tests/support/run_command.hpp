// A shell command run to its end, with its exit status and what it wrote (stdout and stderr).
#pragma once

#include <string>

namespace ratelimitd::test {

struct CommandResult {
    int status = -1;     ///< the exit status; -1 when it could not run or was killed
    std::string output;  ///< stdout and stderr together
};

/// Runs `command` with /bin/sh and waits for it.
CommandResult run_command(const std::string& command);

/// `text` quoted for /bin/sh as one word.
std::string shell_quote(const std::string& text);

}  // namespace ratelimitd::test
