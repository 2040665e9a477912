#pragma once

// Where the build put the server, the sources and the test data. The absolute paths live in one
// object file (build_paths.cpp), so every other test object is the same bytes in every checkout:
// a clean clone's build (CI's) reuses the compiler cache of the developer's tree instead of
// recompiling each unity batch in which one file names a path.
namespace ratelimitd::test::build_paths {

const char* binary();
const char* source_dir();
const char* test_data_dir();

}  // namespace ratelimitd::test::build_paths

#define RATELIMITD_BINARY (::ratelimitd::test::build_paths::binary())
#define RATELIMITD_SOURCE_DIR (::ratelimitd::test::build_paths::source_dir())
#define RATELIMITD_TEST_DATA_DIR (::ratelimitd::test::build_paths::test_data_dir())
