// Envoy Gateway's rate limit dashboard against ERL mode: the binary started with Envoy Gateway's
// stats variables (USE_STATSD=false, USE_PROMETHEUS=true, PROMETHEUS_MAPPER_YAML its
// statsd_conf.yaml, tests/data/erl-stats/) and rules shaped as it writes them, a real
// Prometheus scraping PROMETHEUS_ADDR; the PromQL of its "Total Hits", "Near Limit" and "Over
// Limit" panels (charts/gateway-addons-helm/dashboards/global-ratelimit.json) answers with the
// exact counts of the calls made, and its memory panels' series are there.
#include "grpc/erl_stats_deployment.hpp"
#include "support/prometheus.hpp"

#include <chrono>

namespace ratelimitd::test::grpc_erl_stats_dashboard_test {
namespace {

using namespace std::chrono_literals;

// The descriptor Envoy Gateway's translator writes for the first match of an HTTPRoute rule,
// and which its dashboard queries (the `DefaultDomain` variable is default/eg/http).
const std::string route_key = "httproute/default/http-ratelimit/rule/0/match/0/ratelimit_example";
const std::string match_key = "rule-0-match-0";

std::string rules() {
    return "domain: default/eg/http\n"
           "descriptors:\n"
           "  - key: " + route_key + "\n"
           "    value: " + route_key + "\n"
           "    descriptors:\n"
           "      - key: " + match_key + "\n"
           "        value: " + match_key + "\n"
           "        rate_limit: {unit: hour, requests_per_unit: 3}\n";
}

// The panels' expressions as the dashboard holds them, with $DefaultDomain in place.
std::string panel_query(const std::string& stat) {
    return "ratelimit_service_rate_limit_" + stat + "{domain=\"default/eg/http\", key1=\"" + route_key + "_" +
           route_key + "\", key2=\"" + match_key + "_" + match_key + "\"}";
}

TEST_F(ErlStatsDeployment, EnvoyGatewaysDashboardPanelsAnswerFromARealPrometheus) {
    const unsigned short metrics_port = free_port();
    vars_["USE_STATSD"] = "false";
    vars_["USE_PROMETHEUS"] = "true";
    vars_["PROMETHEUS_ADDR"] = "127.0.0.1:" + std::to_string(metrics_port);
    vars_["PROMETHEUS_MAPPER_YAML"] = std::string(RATELIMITD_TEST_DATA_DIR) + "/erl-stats/eg_statsd_conf.yaml";
    write_rules(rules());
    in_one_hour([&] {  // the five calls in one aligned hour, from a fresh process
        start_serving();
        RlsClient client(port("GRPC_PORT"));
        // 3 an hour: 3 within (the 3rd past floor(3 * 0.8) = 2: near), 2 over.
        EXPECT_EQ(call_times(client, "default/eg/http", {{route_key, route_key}, {match_key, match_key}}, 5), 2);
    });

    PrometheusServer prometheus(metrics_port, 1s);
    ASSERT_TRUE(wait_until([&] { return prometheus.scalar(panel_query("total_hits")) >= 0; }, 30s, 250ms))
        << HttpClient(metrics_port).get("/metrics").body;
    EXPECT_EQ(prometheus.scalar(panel_query("total_hits")), 5);
    EXPECT_EQ(prometheus.scalar(panel_query("near_limit")), 1);
    EXPECT_EQ(prometheus.scalar(panel_query("over_limit")), 2);
    EXPECT_EQ(prometheus.scalar("ratelimit_service_config_load_success"), 1);
    // Its memory panels (their app_kubernetes_io_component label is the scrape's, added by
    // Kubernetes service discovery): both series present, the address space above the RSS.
    EXPECT_GT(prometheus.scalar("process_resident_memory_bytes"), 1e6);
    EXPECT_GT(prometheus.scalar("process_virtual_memory_bytes - process_resident_memory_bytes"), 0);
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_stats_dashboard_test
