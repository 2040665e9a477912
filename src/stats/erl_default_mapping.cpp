// The text of StatsdMapper::erl_default (statsd_mapper.cpp): the mapping envoyproxy/ratelimit's
// Prometheus sink uses when PROMETHEUS_MAPPER_YAML is unset, built from its published series names and labels: each
// descriptor stat by domain and first key (a glob), or by domain and two keys (a regular
// expression, deeper paths folded into them); the service's error, request and config-load
// counters.
#include "ratelimitd/stats/erl_default_mapping.hpp"

#include <string>

namespace ratelimitd::stats {

std::string erl_default_mapping_yaml() {
    std::string y = "mappings:\n";
    const char* const stats[] = {"near_limit", "over_limit", "total_hits", "within_limit", "shadow_mode"};
    for (const char* s : stats) {
        y += std::string("  - match: \"ratelimit.service.rate_limit.*.*.") + s + "\"\n" +
             "    name: \"ratelimit_service_rate_limit_" + s + "\"\n" +
             "    labels: {domain: \"$1\", key1: \"$2\"}\n";
    }
    for (const char* s : stats) {
        y += std::string("  - match: 'ratelimit\\.service\\.rate_limit\\.([^\\.]*)\\.([^\\.]*)\\.([^\\.]*)(\\..*)?\\.") +
             s + "'\n" + "    match_type: regex\n" + "    name: \"ratelimit_service_rate_limit_" + s + "\"\n" +
             "    labels: {domain: \"$1\", key1: \"$2\", key2: \"$3\"}\n";
    }
    y += "  - match: \"ratelimit.service.call.should_rate_limit.*\"\n"
         "    name: \"ratelimit_service_should_rate_limit_error\"\n"
         "    match_metric_type: counter\n"
         "    labels: {err_type: \"$1\"}\n"
         "  - match: \"ratelimit_server.*.total_requests\"\n"
         "    name: \"ratelimit_service_total_requests\"\n"
         "    match_metric_type: counter\n"
         "    labels: {grpc_method: \"$1\"}\n"
         "  - match: \"ratelimit.service.config_load_success\"\n"
         "    name: \"ratelimit_service_config_load_success\"\n"
         "    match_metric_type: counter\n"
         "  - match: \"ratelimit.service.config_load_error\"\n"
         "    name: \"ratelimit_service_config_load_error\"\n"
         "    match_metric_type: counter\n";
    return y;
}

}  // namespace ratelimitd::stats
