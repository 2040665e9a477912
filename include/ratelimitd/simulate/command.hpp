// `ratelimitd simulate`: replays an access log through a config offline (docs/simulate.md).
#pragma once

#include "ratelimitd/config/resolve.hpp"

namespace ratelimitd::simulate {

/// Runs the command on the arguments after `simulate` (argv[0] is "simulate"). Reads files
/// only; opens no port. Exit code: 0 done, 1 a config that fails validation (named on stderr,
/// before the log is read), 2 a usage error, a bad setting or a log that cannot be read.
/// `env`: the process's variables, read as the server's settings read them
/// (RATELIMITD_HASH_SECRET for hashed identities).
int run_command(int argc, const char* const* argv, const config::EnvLookup& env);

}  // namespace ratelimitd::simulate
