// ERL mode's stats end to end: real ShouldRateLimit calls on an ERL-mode ratelimitd (real
// redis-server) move envoyproxy/ratelimit's counters by exactly what its service counts, seen
// as statsd lines by a UDP receiver (USE_STATSD) and as mapped series on /metrics
// (USE_PROMETHEUS, its default mapping); values clients send cannot grow the stat names past
// their bound; a mapping file asking for what is not implemented stops the start.
#include "grpc/erl_stats_deployment.hpp"
#include "support/statsd_receiver.hpp"

#include <chrono>

namespace ratelimitd::test::grpc_erl_stats_test {
namespace {

using namespace std::chrono_literals;

const char* const rules = R"(domain: edge
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 10}
  - key: route
    value: login
    descriptors:
      - key: user
        rate_limit: {unit: hour, requests_per_unit: 5}
  - key: remote_address
    detailed_metric: true
    rate_limit: {unit: hour, requests_per_unit: 100}
  - key: tenant
    shadow_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
)";

/// The calls every test makes: 21 over gRPC.
void make_the_calls(unsigned short grpc_port) {
    RlsClient client(grpc_port);
    // 10 within; the 9th and 10th past floor(10 * 0.8) = 8 are near; 2 over.
    EXPECT_EQ(call_times(client, "edge", {{"user", "alice"}}, 12), 2);
    EXPECT_EQ(call_times(client, "edge", {{"route", "login"}, {"user", "bob"}}, 3), 0);
    EXPECT_EQ(call_times(client, "edge", {{"remote_address", "10.0.0.1"}}, 2), 0);
    // shadow_mode, 1 an hour: 1 within (past floor(0.8) = 0: near), 2 over and shadowed, all OK.
    EXPECT_EQ(call_times(client, "edge", {{"tenant", "t1"}}, 3), 0);
    EXPECT_EQ(call_times(client, "nowhere", {{"user", "alice"}}, 1), 0);
}

// What envoyproxy/ratelimit counts for make_the_calls: stat name -> count.
const std::map<std::string, std::uint64_t> expected{
    {"ratelimit.service.rate_limit.edge.user.total_hits", 12},
    {"ratelimit.service.rate_limit.edge.user.within_limit", 10},
    {"ratelimit.service.rate_limit.edge.user.near_limit", 2},
    {"ratelimit.service.rate_limit.edge.user.over_limit", 2},
    {"ratelimit.service.rate_limit.edge.route_login.user.total_hits", 3},
    {"ratelimit.service.rate_limit.edge.route_login.user.within_limit", 3},
    {"ratelimit.service.rate_limit.edge.remote_address_10_0_0_1.total_hits", 2},
    {"ratelimit.service.rate_limit.edge.remote_address_10_0_0_1.within_limit", 2},
    {"ratelimit.service.rate_limit.edge.tenant.total_hits", 3},
    {"ratelimit.service.rate_limit.edge.tenant.within_limit", 1},
    {"ratelimit.service.rate_limit.edge.tenant.near_limit", 1},
    {"ratelimit.service.rate_limit.edge.tenant.over_limit", 2},
    {"ratelimit.service.rate_limit.edge.tenant.shadow_mode", 2},
    {"ratelimit.service.rate_limit.nowhere.domain_not_found", 1},
    {"ratelimit_server.ShouldRateLimit.total_requests", 21},
    {"ratelimit.service.config_load_success", 1},
};

TEST_F(ErlStatsDeployment, StatsdLinesCarryEnvoyproxyRatelimitsNamesAndCounts) {
    in_one_hour([&] {
        StatsdReceiver receiver;
        vars_["USE_STATSD"] = "true";
        vars_["STATSD_HOST"] = "127.0.0.1";
        vars_["STATSD_PORT"] = std::to_string(receiver.port());
        vars_["STATS_FLUSH_INTERVAL"] = "100ms";
        vars_["EXTRA_TAGS"] = "app:edge";
        write_rules(rules);
        start_serving();
        make_the_calls(port("GRPC_PORT"));

        const auto tagged = [](const std::string& name) { return name + ".__app=edge"; };
        const auto totals = receiver.wait_for(
            [&](const auto& seen) {
                for (const auto& [name, count] : expected) {
                    const auto it = seen.find(tagged(name));
                    if (it == seen.end() || it->second < count) return false;
                }
                return true;
            },
            10s);
        for (const auto& [name, count] : expected) {
            const auto it = totals.find(tagged(name));
            ASSERT_NE(it, totals.end()) << name << "\n" << process_.log();
            EXPECT_EQ(it->second, count) << name;
        }
        // Counters that never moved are not sent, as envoyproxy/ratelimit's stats library skips them.
        EXPECT_EQ(totals.count(tagged("ratelimit.service.rate_limit.edge.route_login.user.near_limit")), 0u);
        EXPECT_EQ(totals.count(tagged("ratelimit.service.config_load_error")), 0u);
        for (const auto& line : receiver.lines()) {
            EXPECT_NE(line.find(".__app=edge:"), std::string::npos) << line;
            EXPECT_EQ(line.substr(line.size() - 2), "|c") << line;
        }
    });
}

TEST_F(ErlStatsDeployment, AStatsdReceiverThatIsGoneCostsTheChecksNothing) {
    in_one_hour([&] {
        vars_["USE_STATSD"] = "true";
        vars_["STATSD_HOST"] = "127.0.0.1";
        vars_["STATSD_PORT"] = std::to_string(free_port());  // nobody reads it
        vars_["STATS_FLUSH_INTERVAL"] = "100ms";
        write_rules(rules);
        start_serving();
        RlsClient client(port("GRPC_PORT"));
        EXPECT_EQ(call_times(client, "edge", {{"user", "alice"}}, 12), 2);
        // The sink keeps flushing into the void; every check was answered as ever.
        EXPECT_TRUE(wait_until(
            [&] { return series_value(port("DEBUG_PORT"), "ratelimitd_erl_statsd_datagrams_total{result=\"sent\"}") >= 1; },
            10s))
            << HttpClient(port("DEBUG_PORT")).get("/metrics").body;
        EXPECT_EQ(call_times(client, "edge", {{"user", "alice"}}, 1), 1);
    });
}

TEST_F(ErlStatsDeployment, MetricsServeTheDefaultMappingsSeriesWithExactCounts) {
    in_one_hour([&] {
        vars_["USE_STATSD"] = "false";
        vars_["USE_PROMETHEUS"] = "true";
        vars_["PROMETHEUS_ADDR"] = "127.0.0.1:" + std::to_string(free_port());
        write_rules(rules);
        start_serving();
        make_the_calls(port("GRPC_PORT"));
        const auto prometheus_port = static_cast<unsigned short>(std::stoi(vars_["PROMETHEUS_ADDR"].substr(10)));
        const std::map<std::string, double> series{
            {R"(ratelimit_service_rate_limit_total_hits{domain="edge",key1="user"})", 12},
            {R"(ratelimit_service_rate_limit_within_limit{domain="edge",key1="user"})", 10},
            {R"(ratelimit_service_rate_limit_near_limit{domain="edge",key1="user"})", 2},
            {R"(ratelimit_service_rate_limit_over_limit{domain="edge",key1="user"})", 2},
            {R"(ratelimit_service_rate_limit_total_hits{domain="edge",key1="route_login",key2="user"})", 3},
            {R"(ratelimit_service_rate_limit_total_hits{domain="edge",key1="remote_address_10_0_0_1"})", 2},
            {R"(ratelimit_service_rate_limit_shadow_mode{domain="edge",key1="tenant"})", 2},
            {R"(ratelimit_service_total_requests{grpc_method="ShouldRateLimit"})", 21},
            {"ratelimit_service_config_load_success", 1},
            // No mapping names it: escaped, as statsd_exporter exports an unmapped counter.
            {"ratelimit_service_rate_limit_nowhere_domain_not_found", 1},
            {"ratelimit_service_global_shadow_mode", -1},
            {R"(ratelimit_service_rate_limit_near_limit{domain="edge",key1="route_login",key2="user"})", -1},
        };
        for (const auto& [name, value] : series) {
            EXPECT_EQ(series_value(prometheus_port, name), value) << name << "\n"
                                                                  << HttpClient(prometheus_port).get("/metrics").body;
        }
    });
}

// A call that crosses the limit with hits_addend: 10/h (near threshold 8), the counter at 7, then
// 5 more -> 12. envoyproxy/ratelimit's base limiter counts that call 2 over, 2 near and none
// within; the store answers its count past the limit (lua/erl_fixed_window.lua), so here too.
TEST_F(ErlStatsDeployment, ACrossingHitsAddendSplitsItsHitsAsItsBaseLimiterDoes) {
    in_one_hour([&] {
        vars_["USE_STATSD"] = "false";
        vars_["USE_PROMETHEUS"] = "true";
        vars_["PROMETHEUS_ADDR"] = "127.0.0.1:" + std::to_string(free_port());
        write_rules(rules);
        start_serving();
        RlsClient client(port("GRPC_PORT"));
        EXPECT_EQ(client.code(rls_request("edge", {Descriptor{{{"user", "carol"}}, 7}})), RlsResponse::OK);
        EXPECT_EQ(client.code(rls_request("edge", {Descriptor{{{"user", "carol"}}, 5}})), RlsResponse::OVER_LIMIT);
        const auto prometheus_port = static_cast<unsigned short>(std::stoi(vars_["PROMETHEUS_ADDR"].substr(10)));
        const std::map<std::string, double> series{
            {R"(ratelimit_service_rate_limit_total_hits{domain="edge",key1="user"})", 12},
            {R"(ratelimit_service_rate_limit_within_limit{domain="edge",key1="user"})", 7},
            {R"(ratelimit_service_rate_limit_near_limit{domain="edge",key1="user"})", 2},
            {R"(ratelimit_service_rate_limit_over_limit{domain="edge",key1="user"})", 2},
        };
        for (const auto& [name, value] : series) {
            EXPECT_EQ(series_value(prometheus_port, name), value) << name << "\n"
                                                                  << HttpClient(prometheus_port).get("/metrics").body;
        }
    });
}

// The abuse case: detailed_metric names a stat by each value sent. Past the bound of 2,000 such
// names, counts are dropped (and counted), the names made stay 2,000: memory stays bounded
// whatever values clients send.
TEST_F(ErlStatsDeployment, ValuesClientsSendCannotGrowStatNamesPastTheirBound) {
    vars_["USE_STATSD"] = "false";
    vars_["USE_PROMETHEUS"] = "true";
    vars_["PROMETHEUS_ADDR"] = "127.0.0.1:" + std::to_string(free_port());
    write_rules(rules);
    start_serving();
    RlsClient client(port("GRPC_PORT"));
    int value = 0;
    for (int call = 0; call < 33; ++call) {  // 33 calls of 64 distinct addresses: 2,112 values
        std::vector<Descriptor> descriptors;
        for (int d = 0; d < 64; ++d) {
            descriptors.push_back({{{"remote_address", "v" + std::to_string(value++)}}, std::nullopt});
        }
        ASSERT_EQ(client.code(rls_request("edge", descriptors)), RlsResponse::OK);
    }
    const unsigned short debug = port("DEBUG_PORT");
    EXPECT_EQ(series_value(debug, "ratelimitd_erl_stats_dropped_total"), 112);
    // The service's 6 counters and 5 for each of the 2,000 paths admitted.
    EXPECT_EQ(series_value(debug, "ratelimitd_erl_stats_counters"), 6 + 5 * 2000);
    EXPECT_EQ(series_value(debug, R"(ratelimit_service_rate_limit_total_hits{domain="edge",key1="remote_address_v1999"})"),
              1);
    EXPECT_EQ(series_value(debug, R"(ratelimit_service_rate_limit_total_hits{domain="edge",key1="remote_address_v2000"})"),
              -1);
}

TEST_F(ErlStatsDeployment, AMappingFileAskingForMoreThanImplementedStopsTheStart) {
    std::ofstream(dir_ / "mapper.yaml") << "mappings:\n  - match: \"ratelimit.*\"\n    name: x\n    action: drop\n";
    vars_["USE_STATSD"] = "false";
    vars_["USE_PROMETHEUS"] = "true";
    vars_["PROMETHEUS_ADDR"] = "127.0.0.1:" + std::to_string(free_port());
    vars_["PROMETHEUS_MAPPER_YAML"] = (dir_ / "mapper.yaml").string();
    write_rules(rules);
    EXPECT_EQ(start().wait(process_start_bound), 1);
    EXPECT_NE(process_.log().find("mapper.yaml: mappings[0].action: not supported"), std::string::npos)
        << process_.log();
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_stats_test
