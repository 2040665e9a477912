// cluster_refusal: layered limits need one Redis (or Sentinel), not a cluster.
#include "ratelimitd/store/redis/cluster/cluster_rules.hpp"

namespace ratelimitd::store::redis::cluster {

std::optional<std::string> cluster_refusal(const policy::Registry& registry) {
    for (std::size_t i = 0; i < registry.routes.size(); ++i) {
        const auto& r = registry.routes[i];
        if (r.limits.size() <= 1) continue;
        std::string names;
        for (const auto& l : r.limits) names += (names.empty() ? "" : ", ") + l.policy;
        return "routes[" + std::to_string(i) + "] (" + (r.method ? *r.method + " " : std::string()) + r.path +
               ") has " + std::to_string(r.limits.size()) + " limits (" + names +
               ") decided together, but their keys lie in different Redis Cluster hash slots and one script "
               "call cannot span slots; layered limits need a single Redis or Sentinel (redis:// or "
               "redis-sentinel://)";
    }
    return std::nullopt;
}

}  // namespace ratelimitd::store::redis::cluster
