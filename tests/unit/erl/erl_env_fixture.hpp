// An environment for the mapper's tests: a map looked up like getenv.
#pragma once

#include "ratelimitd/config/resolve.hpp"

#include <map>
#include <string>

namespace ratelimitd::erl::testing {

/// The variables of a typical ERL Deployment (Istio's and envoyproxy/ratelimit's examples).
inline std::map<std::string, std::string> deployment_env() {
    return {{"REDIS_SOCKET_TYPE", "tcp"},    {"REDIS_URL", "redis:6379"},
            {"RUNTIME_ROOT", "/data"},       {"RUNTIME_SUBDIRECTORY", "ratelimit"},
            {"RUNTIME_WATCH_ROOT", "false"}, {"RUNTIME_IGNOREDOTFILES", "true"},
            {"USE_STATSD", "false"},         {"LOG_LEVEL", "debug"}};
}

/// `vars` as a lookup; `vars` must outlive it.
inline config::EnvLookup lookup(const std::map<std::string, std::string>& vars) {
    return [&vars](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

}  // namespace ratelimitd::erl::testing
