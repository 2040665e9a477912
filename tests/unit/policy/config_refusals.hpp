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

/// The same, but "" when the text loads: for tests that assert there is no refusal.
inline std::string refusal(const std::string& text, const std::string& name = "r.yaml") {
    try {
        (void)policy::parse_config(text, name);
    } catch (const policy::ConfigError& e) {
        return e.what();
    }
    return "";
}

}  // namespace ratelimitd::test
