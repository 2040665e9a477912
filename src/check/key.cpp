// Builds the Redis key of one (policy, tenant, scope); the layout is documented in key.hpp.
#include "ratelimitd/check/key.hpp"

namespace ratelimitd::check {

std::string make_key(std::string_view prefix, std::string_view policy, std::string_view tenant,
                     std::string_view scope) {
    std::string key;
    key.reserve(prefix.size() + policy.size() + tenant.size() + scope.size() + 3);
    key.append(prefix).append(":").append(policy).append(":").append(tenant).append(":").append(
        scope);
    return key;
}

std::string make_window_key(std::string_view prefix, std::string_view policy, std::string_view tenant,
                            std::string_view scope, std::string_view span) {
    std::string key;
    key.reserve(prefix.size() + policy.size() + tenant.size() + scope.size() + span.size() + 6);
    key.append(prefix).append(":").append(policy).append(":{").append(tenant).append(":").append(scope);
    key.append("}:").append(span);
    return key;
}

}  // namespace ratelimitd::check
