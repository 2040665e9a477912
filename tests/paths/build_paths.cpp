#include "support/build_paths.hpp"

// The only test object compiled with the checkout's absolute paths (see build_paths.hpp).
namespace ratelimitd::test::build_paths {

const char* binary() { return RATELIMITD_BUILD_BINARY; }
const char* source_dir() { return RATELIMITD_BUILD_SOURCE_DIR; }
const char* test_data_dir() { return RATELIMITD_BUILD_TEST_DATA_DIR; }

}  // namespace ratelimitd::test::build_paths
