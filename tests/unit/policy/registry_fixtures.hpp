// The registry fixtures (tests/data/registry) and the message a fixture file is refused with:
// shared by the registry_loader_*_test.cpp files, which test load_config by subject.
#pragma once

#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include <string>

namespace ratelimitd::test {

inline const std::string registry_data_dir = std::string(RATELIMITD_TEST_DATA_DIR) + "/registry";

/// The message load_config refuses the file at `path` with (it starts with the path), or
/// "(loaded without error)".
inline std::string load_error_of(const std::string& path) {
    try {
        policy::load_config(path);
    } catch (const policy::ConfigError& e) {
        return e.what();
    }
    return "(loaded without error)";
}

}  // namespace ratelimitd::test
