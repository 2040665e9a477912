// What a config may not ask of a Redis Cluster store.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <optional>
#include <string>

namespace ratelimitd::store::redis::cluster {

/// A script call on Redis Cluster may touch keys of one hash slot only, and the keys of a
/// route's layered limits (several `limits:`) lie in different slots. Returns a refusal naming
/// the first such route, or nothing when the registry can run on a cluster. Pure.
std::optional<std::string> cluster_refusal(const policy::Registry& registry);

}  // namespace ratelimitd::store::redis::cluster
