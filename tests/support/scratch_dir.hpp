// The scratch directory of a test process: the servers' logs, configs and data files.
#pragma once

#include <string>

namespace ratelimitd::test {

/// A unique scratch directory under /tmp for this test process, removed when it exits
/// (RATELIMITD_KEEP_SCRATCH=1 keeps it for a look after a failure).
std::string scratch_dir();

}  // namespace ratelimitd::test
