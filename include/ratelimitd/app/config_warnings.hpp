// What a valid config leaves unlimited or unshared without saying so: one warning line each,
// logged at start and after every reload (an edit can bring one in or take it away).
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <string>
#include <vector>

namespace ratelimitd::app {

/// What the warnings need beyond the registry.
struct WarningContext {
    bool secret_from_environment = false;  ///< RATELIMITD_HASH_SECRET is set
    bool grpc_serving = false;             ///< --grpc-listen is set: Envoy asks for its domains
    bool domains_from_xds = false;         ///< xds_server is set: the domains are not the file's
};

/// The warnings of `registry`, in a fixed order; empty when it limits what it seems to:
/// - routes but no default_policy and no catch-all route: a /v1/auth request no route matches
///   is answered 200 without a limit (ratelimitd_auth_unmatched_total counts them);
/// - a hashed identity source but no hash secret: each process hashes with its own random
///   key, so one API key is a different tenant on each instance and after each restart;
/// - the gRPC server on but no Envoy domain (`domains:`, `envoy_config:`) and no xds_server:
///   every ShouldRateLimit call is answered OK without a limit.
std::vector<std::string> config_warnings(const policy::Registry& registry, const WarningContext& context);

/// Logs config_warnings() at warn level.
void log_config_warnings(const policy::Registry& registry, const WarningContext& context);

}  // namespace ratelimitd::app
