// The mapping subset: envoyproxy/ratelimit's default mapping and Envoy Gateway's file map the
// names as statsd_exporter does (globs first, then regular expressions); the rest is refused
// when read, naming what.
#include "ratelimitd/stats/statsd_mapper.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace ratelimitd::stats {
namespace {

std::string read_data(const std::string& name) {
    std::ifstream in(std::string(RATELIMITD_TEST_DATA_DIR) + "/erl-stats/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

using Labels = std::vector<std::pair<std::string, std::string>>;

void expect_maps(const StatsdMapper& m, const std::string& from, const std::string& name, const Labels& labels) {
    const auto mapped = m.map(from);
    ASSERT_TRUE(mapped.has_value()) << from;
    EXPECT_EQ(mapped->name, name) << from;
    EXPECT_EQ(mapped->labels, labels) << from;
}

void expect_the_published_mapping(const StatsdMapper& m) {
    expect_maps(m, "ratelimit.service.rate_limit.edge.user.total_hits", "ratelimit_service_rate_limit_total_hits",
                {{"domain", "edge"}, {"key1", "user"}});
    expect_maps(m, "ratelimit.service.rate_limit.edge.user_alice.over_limit", "ratelimit_service_rate_limit_over_limit",
                {{"domain", "edge"}, {"key1", "user_alice"}});
    // Three parts and more: the regular expression, deeper parts folded away.
    expect_maps(m, "ratelimit.service.rate_limit.edge.route_a.user.near_limit",
                "ratelimit_service_rate_limit_near_limit", {{"domain", "edge"}, {"key1", "route_a"}, {"key2", "user"}});
    expect_maps(m, "ratelimit.service.rate_limit.edge.a.b.c.d.shadow_mode", "ratelimit_service_rate_limit_shadow_mode",
                {{"domain", "edge"}, {"key1", "a"}, {"key2", "b"}});
    expect_maps(m, "ratelimit.service.call.should_rate_limit.redis_error", "ratelimit_service_should_rate_limit_error",
                {{"err_type", "redis_error"}});
    expect_maps(m, "ratelimit_server.ShouldRateLimit.total_requests", "ratelimit_service_total_requests",
                {{"grpc_method", "ShouldRateLimit"}});
    expect_maps(m, "ratelimit.service.config_load_success", "ratelimit_service_config_load_success", {});
    expect_maps(m, "ratelimit.service.config_load_error", "ratelimit_service_config_load_error", {});
    EXPECT_FALSE(m.map("ratelimit.service.global_shadow_mode").has_value());
    EXPECT_FALSE(m.map("ratelimit.service.rate_limit.edge.domain_not_found").has_value());
}

TEST(StatsdMapper, TheBuiltInDefaultMapsAsPublished) { expect_the_published_mapping(StatsdMapper::erl_default()); }

TEST(StatsdMapper, EnvoyProxyRatelimitsOwnFileMapsTheSame) {
    const auto m = StatsdMapper::parse(read_data("erl_default_mapper.yaml"), "default_mapper.yaml");
    ASSERT_TRUE(m.has_value()) << m.error().detail;
    expect_the_published_mapping(*m);
}

TEST(StatsdMapper, EnvoyGatewaysFileMapsItsDashboardsSeries) {
    const auto m = StatsdMapper::parse(read_data("eg_statsd_conf.yaml"), "statsd_conf.yaml");
    ASSERT_TRUE(m.has_value()) << m.error().detail;
    expect_the_published_mapping(*m);
    const std::string key1 =
        "httproute/default/http-ratelimit/rule/0/match/0/ratelimit_example_httproute/default/http-ratelimit/rule/0/"
        "match/0/ratelimit_example";
    expect_maps(*m, "ratelimit.service.rate_limit.default/eg/http." + key1 + ".rule-0-match-0_rule-0-match-0.total_hits",
                "ratelimit_service_rate_limit_total_hits",
                {{"domain", "default/eg/http"}, {"key1", key1}, {"key2", "rule-0-match-0_rule-0-match-0"}});
}

TEST(StatsdMapper, WhatIsNotImplementedIsRefusedByName) {
    const std::pair<const char*, const char*> cases[] = {
        {"mappings:\n  - match: a.*\n    name: x\n    action: drop\n", "mappings[0].action: not supported"},
        {"defaults:\n  match_type: regex\nmappings: []\n", "defaults: not supported"},
        {"mappings:\n  - match: a.*\n    name: x\n    ttl: 1m\n", "mappings[0].ttl: not supported"},
        {"mappings:\n  - match: a.*\n", "mappings[0].name: required"},
        {"mappings:\n  - match: a.*\n    name: \"bad-name\"\n", "not a Prometheus metric name"},
        {"mappings:\n  - match: '(a'\n    match_type: regex\n    name: x\n", "not a regular expression"},
        {"mappings:\n  - match: a\n    match_type: fuzzy\n    name: x\n", "expected glob or regex"},
        {"mappings: [\n", "not YAML"},
    };
    for (const auto& [yaml, why] : cases) {
        const auto m = StatsdMapper::parse(yaml, "f.yaml");
        ASSERT_FALSE(m.has_value()) << yaml;
        EXPECT_EQ(m.error().detail.rfind("f.yaml: ", 0), 0u) << m.error().detail;
        EXPECT_NE(m.error().detail.find(why), std::string::npos) << m.error().detail;
    }
}

TEST(StatsdMapper, GaugeMappingsDoNotTakeCountersAndGlobsComeFirst) {
    const auto m = StatsdMapper::parse("mappings:\n"
                                       "  - match: 'a\\.(.*)'\n    match_type: regex\n    name: by_regex\n"
                                       "  - match: a.*\n    name: by_gauge\n    match_metric_type: gauge\n"
                                       "  - match: a.*\n    name: by_glob\n    labels: {v: \"$1\"}\n",
                                       "f.yaml");
    ASSERT_TRUE(m.has_value()) << m.error().detail;
    expect_maps(*m, "a.b", "by_glob", {{"v", "b"}});
    expect_maps(*m, "a.b.c", "by_regex", {});
}

TEST(StatsdMapper, AnUnmappedNameIsEscapedAsStatsdExporterDoes) {
    EXPECT_EQ(StatsdMapper::escape_name("ratelimit.service.global_shadow_mode"), "ratelimit_service_global_shadow_mode");
    EXPECT_EQ(StatsdMapper::escape_name("9lives/x-y"), "_9lives_x_y");
}

}  // namespace
}  // namespace ratelimitd::stats
