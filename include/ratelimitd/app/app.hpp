// The composition root: settings -> registry -> store -> service -> server -> signals -> run.
#pragma once

#include "ratelimitd/app/run_options.hpp"
#include "ratelimitd/app/settings.hpp"
#include "ratelimitd/policy/policy.hpp"

namespace ratelimitd::app {

/// Runs the service until SIGTERM/SIGINT, then drains (finishes requests in flight, closes
/// keep-alive connections) and returns the exit code: 0 after a clean stop, 1 when start-up
/// fails (e.g. the listen address is taken). SIGHUP reloads the config file; a file that
/// fails validation is refused with an error line and the old registry keeps serving.
/// `options`: another registry source, watched directory and listeners (ERL mode).
int run(const Settings& settings, policy::Config config, const RunOptions& options = {});

}  // namespace ratelimitd::app
