// cluster_refusal: layered limits on a cluster need a refund for every algorithm they layer.
#include "ratelimitd/store/redis/cluster/cluster_rules.hpp"

namespace ratelimitd::store::redis::cluster {

std::optional<std::string> cluster_refusal(const policy::Registry& registry) {
    for (std::size_t i = 0; i < registry.routes.size(); ++i) {
        const auto& r = registry.routes[i];
        if (r.limits.size() <= 1) continue;
        for (const auto& l : r.limits) {
            const policy::Policy* p = registry.find(l.policy);
            if (p == nullptr || policy::traits(p->algorithm).cluster_refund != policy::ClusterRefund::none) continue;
            return "routes[" + std::to_string(i) + "] (" + (r.method ? *r.method + " " : std::string()) + r.path +
                   ") layers " + std::to_string(r.limits.size()) + " limits, and " + l.policy + " uses " +
                   policy::to_string(p->algorithm) +
                   ": on a Redis Cluster layered limits are decided slot by slot and a denied check's charges "
                   "are given back, which that algorithm cannot do exactly; use another algorithm, or a single "
                   "Redis or Sentinel (redis:// or redis-sentinel://)";
        }
    }
    return std::nullopt;
}

}  // namespace ratelimitd::store::redis::cluster
