// Resolves a command line against a fake environment and file settings: the settings tests'
// one way to call app::resolve_settings.
#pragma once

#include "ratelimitd/app/settings.hpp"

#include <map>
#include <string>
#include <vector>

namespace ratelimitd::test {

/// `args` come after the program name; `env` stands for the process environment.
inline result<app::Settings> resolve(const std::vector<std::string>& args,
                                     const std::map<std::string, std::string>& env,
                                     const policy::FileSettings& file = {}) {
    std::vector<const char*> argv{"ratelimitd"};
    for (const auto& a : args) argv.push_back(a.c_str());
    auto cl = app::parse_command_line(static_cast<int>(argv.size()), argv.data());
    if (!cl) return cl.error();
    const app::EnvLookup lookup = [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    return app::resolve_settings(*cl, file, lookup);
}

}  // namespace ratelimitd::test
