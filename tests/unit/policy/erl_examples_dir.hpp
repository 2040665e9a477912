#pragma once

#include <string>

namespace ratelimitd::test {

/// envoyproxy/ratelimit's example configs, verbatim, in the tree (tests/data/erl-examples/README.md).
inline const std::string reference_dir = std::string(RATELIMITD_TEST_DATA_DIR) + "/erl-examples";

}  // namespace ratelimitd::test
