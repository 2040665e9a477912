// What a config may not ask of a Redis Cluster store.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <optional>
#include <string>

namespace ratelimitd::store::redis::cluster {

/// A script call on Redis Cluster may touch keys of one hash slot only, so a route's layered
/// limits (several `limits:`) are decided slot by slot, and a later slot's denial gives back
/// what earlier slots charged (lua/refund.lua). Returns a refusal naming the first layered
/// route with a limit whose algorithm has no exact refund (sliding_window), or nothing. Pure.
std::optional<std::string> cluster_refusal(const policy::Registry& registry);

}  // namespace ratelimitd::store::redis::cluster
