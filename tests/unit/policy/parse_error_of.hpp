#pragma once

#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include <string>
#include <string_view>

namespace ratelimitd::test {

/// The message parse_config refuses a config text with, named as the file `name` (a message
/// starts with it), or "(loaded without error)".
inline std::string parse_error_of(std::string_view text, const std::string& name) {
    try {
        policy::parse_config(text, name);
    } catch (const policy::ConfigError& e) {
        return e.what();
    }
    return "(loaded without error)";
}

}  // namespace ratelimitd::test
