#pragma once

#include "ratelimitd/config/command_line.hpp"
#include "ratelimitd/config/resolve.hpp"

#include <map>
#include <string>
#include <vector>

namespace ratelimitd::test {

/// The settings config::apply_precedence makes of a command line (`args` after the program
/// name), a fake environment and file settings: the settings table alone, without
/// app::resolve_settings' checks across settings (support/resolve_settings.hpp has those).
inline result<config::Settings> precedence(const std::vector<std::string>& args,
                                           const std::map<std::string, std::string>& env,
                                           const config::FileSettings& file = {}) {
    std::vector<const char*> argv{"ratelimitd"};
    for (const auto& a : args) argv.push_back(a.c_str());
    auto cl = config::parse_command_line(static_cast<int>(argv.size()), argv.data());
    if (!cl) return cl.error();
    const config::EnvLookup lookup = [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    return config::apply_precedence(*cl, file, lookup);
}

}  // namespace ratelimitd::test
