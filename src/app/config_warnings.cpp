// The warnings of a config that is valid but limits less than it seems to.
#include "ratelimitd/app/config_warnings.hpp"

#include "ratelimitd/policy/identity.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ratelimitd::app {
namespace {

// Matches every method and path, so no /v1/auth request is left over.
bool is_catch_all(const policy::Route& route) { return !route.method && route.path == "/*"; }

bool leaves_auth_requests_unlimited(const policy::Registry& registry) {
    return !registry.routes.empty() && !registry.default_policy &&
           std::none_of(registry.routes.begin(), registry.routes.end(), is_catch_all);
}

}  // namespace

std::vector<std::string> config_warnings(const policy::Registry& registry, const WarningContext& context) {
    std::vector<std::string> out;
    if (leaves_auth_requests_unlimited(registry)) {
        out.emplace_back(
            "routes are set but no default_policy: a /v1/auth request no route matches is answered 200 "
            "without any limit (counted in ratelimitd_auth_unmatched_total); set default_policy, or end the "
            "routes with {path: \"/*\", policy: none} to say that is meant");
    }
    if (!context.secret_from_environment && !registry.hash_secret && policy::uses_hashed_identity(registry)) {
        out.emplace_back(
            "no hash_secret in the config and no RATELIMITD_HASH_SECRET: API keys are hashed with a random "
            "per-process key, so one key is a different tenant on each ratelimitd instance and after every "
            "restart; set the same secret everywhere for shared limits");
    }
    if (context.grpc_serving && !context.domains_from_xds && (!registry.domains || registry.domains->by_name.empty())) {
        out.emplace_back(
            "grpc_listen is set but the config defines no Envoy domain (domains: or envoy_config:): every "
            "ShouldRateLimit call is answered OK without any limit");
    }
    return out;
}

void log_config_warnings(const policy::Registry& registry, const WarningContext& context) {
    for (const auto& line : config_warnings(registry, context)) spdlog::warn("{}", line);
}

}  // namespace ratelimitd::app
