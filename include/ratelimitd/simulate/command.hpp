// `ratelimitd simulate`: replays an access log through a config offline (docs/simulate.md).
#pragma once

namespace ratelimitd::simulate {

/// Runs the command on the arguments after `simulate` (argv[0] is "simulate"). Reads files
/// only; opens no port. Exit code: 0 done, 1 a config that fails validation (named on stderr,
/// before the log is read), 2 a usage error or a log that cannot be read.
int run_command(int argc, const char* const* argv);

}  // namespace ratelimitd::simulate
