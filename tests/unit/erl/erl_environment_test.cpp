// ERL's environment -> ratelimitd's settings: the overlay the precedence code reads, the runtime
// layout, the listeners, and the warnings said at start.
#include "erl_env_fixture.hpp"

#include "ratelimitd/config/command_line.hpp"
#include "ratelimitd/erl/erl_environment.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ratelimitd::erl {
namespace {

ErlMode mapped(const std::map<std::string, std::string>& vars) {
    auto mode = map_erl_environment(testing::lookup(vars), "/srv");
    EXPECT_TRUE(mode.has_value()) << (mode ? "" : mode.error().detail);
    return mode ? *mode : ErlMode{};
}

// A Deployment manifest's variables give ERL's defaults wherever it sets nothing.
TEST(ErlEnvironment, ADeploymentsVariablesMapToOurSettingsWithErlsDefaults) {
    const auto vars = testing::deployment_env();
    const ErlMode mode = mapped(vars);
    EXPECT_EQ(mode.overlay.at("RATELIMITD_REDIS_URL"), "redis://redis:6379");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_LISTEN"), "0.0.0.0:8080");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_LISTEN"), "0.0.0.0:8081");
    EXPECT_EQ(mode.debug_listen, "0.0.0.0:6070");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_LOG_LEVEL"), "debug");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_LOG_FORMAT"), "text");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_MAX_CONNECTION_AGE"), "86400000ms");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_DENIAL_CACHE"), "off");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_ENVOY_KEY_LAYOUT"), "envoyproxy-ratelimit");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_ENVOY_EXPIRATION_JITTER"), "300s");
    EXPECT_EQ(mode.overlay.count("RATELIMITD_GRPC_TLS"), 0u);
    EXPECT_TRUE(mode.charge_denied) << "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT defaults to false";
    ASSERT_TRUE(mode.runtime.has_value());
    EXPECT_EQ(mode.runtime->config_directory(), "/data/ratelimit/config");
    EXPECT_FALSE(mode.runtime->watch_root);
    EXPECT_TRUE(mode.runtime->ignore_dot_files);
    EXPECT_FALSE(mode.prometheus_listen.has_value());
    EXPECT_TRUE(mode.warnings.empty()) << mode.warnings.front();
}

// The overlay goes through the ordinary precedence code: its values are checked there.
TEST(ErlEnvironment, TheOverlayFeedsTheOrdinaryPrecedence) {
    const auto vars = testing::deployment_env();
    const ErlMode mode = mapped(vars);
    const std::map<std::string, std::string> process{{"RATELIMITD_ADMIN_TOKEN", "0123456789abcdef0123"}};
    const auto env = overlay_lookup(mode, testing::lookup(process));
    const auto settings = config::apply_precedence(config::CommandLine{}, {}, env);
    ASSERT_TRUE(settings.has_value()) << settings.error().detail;
    EXPECT_EQ(settings->listen_host, "0.0.0.0");
    EXPECT_EQ(settings->listen_port, 8080);
    EXPECT_EQ(settings->grpc_listen, "0.0.0.0:8081");
    EXPECT_EQ(settings->redis_url, "redis://redis:6379");
    EXPECT_EQ(settings->log_level, "debug");
    EXPECT_FALSE(settings->denial_cache);
    EXPECT_EQ(settings->admin_token, "0123456789abcdef0123") << "ordinary RATELIMITD_* variables still apply";
}

TEST(ErlEnvironment, UseStatsdAtItsDefaultSendsToLocalhost) {
    auto vars = testing::deployment_env();
    vars.erase("USE_STATSD");
    vars["EXTRA_TAGS"] = "app:edge,zone:eu-1";
    vars["NEAR_LIMIT_RATIO"] = "0.5";
    const ErlMode mode = mapped(vars);
    EXPECT_TRUE(mode.warnings.empty());
    EXPECT_TRUE(mode.stats.counted);
    EXPECT_TRUE(mode.stats.statsd);
    EXPECT_FALSE(mode.stats.prometheus);
    EXPECT_EQ(mode.stats.statsd_host, "localhost");
    EXPECT_EQ(mode.stats.statsd_port, 8125);
    EXPECT_EQ(mode.stats.flush_interval, std::chrono::seconds(10));
    EXPECT_EQ(mode.stats.near_limit_ratio, 0.5F);
    const std::vector<std::pair<std::string, std::string>> tags{{"app", "edge"}, {"zone", "eu-1"}};
    EXPECT_EQ(mode.stats.tags, tags);
}

TEST(ErlEnvironment, StatsVariablesRefusedAsEnvoyproxyRatelimitRefusesThem) {
    auto vars = testing::deployment_env();
    vars.erase("USE_STATSD");
    vars["USE_PROMETHEUS"] = "true";
    auto mode = map_erl_environment(testing::lookup(vars), "/");
    ASSERT_FALSE(mode.has_value());
    EXPECT_EQ(mode.error().detail,
              "USE_STATSD: true (its default) with USE_PROMETHEUS=true: one stats sink at a time; set USE_STATSD=false");
    vars["USE_STATSD"] = "false";
    vars["DISABLE_STATS"] = "true";
    mode = map_erl_environment(testing::lookup(vars), "/");
    ASSERT_TRUE(mode.has_value()) << mode.error().detail;
    EXPECT_FALSE(mode->stats.counted) << "DISABLE_STATS: nothing counted";
    vars = testing::deployment_env();
    vars["EXTRA_TAGS"] = "novalue";
    mode = map_erl_environment(testing::lookup(vars), "/");
    ASSERT_FALSE(mode.has_value());
    EXPECT_EQ(mode.error().detail, "EXTRA_TAGS: expected k1:v1,k2:v2, got \"novalue\"");
}

TEST(ErlEnvironment, RedisTypesAuthAndTlsMakeOurUrls) {
    auto vars = testing::deployment_env();
    vars["REDIS_AUTH"] = "p@ss:w/rd";
    vars["REDIS_TLS"] = "true";
    vars["REDIS_TLS_CACERT"] = "/certs/ca.crt";
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_REDIS_URL"), "rediss://p%40ss:w%2Frd@redis:6379");
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_REDIS_TLS_CA"), "/certs/ca.crt");
    vars.erase("REDIS_TLS");
    vars["REDIS_AUTH"] = "secret";
    vars["REDIS_TYPE"] = "cluster";
    vars["REDIS_URL"] = "10.0.0.1:7000, 10.0.0.2:7000";
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_REDIS_URL"), "redis-cluster://:secret@10.0.0.1:7000,10.0.0.2:7000");
    vars["REDIS_TYPE"] = "SENTINEL";
    vars["REDIS_URL"] = "mymaster,10.0.0.1:26379,10.0.0.2:26379";
    vars["REDIS_SENTINEL_AUTH"] = "s3";
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_REDIS_URL"),
              "redis-sentinel://:secret@10.0.0.1:26379,10.0.0.2:26379/mymaster?sentinel_password=s3");
    vars["REDIS_URL"] = "10.0.0.1:26379";
    const auto refused = map_erl_environment(testing::lookup(vars), "/");
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().detail.rfind("REDIS_URL: REDIS_TYPE=sentinel expects", 0), 0u);
}

// REDIS_PERSECOND=true: its REDIS_PERSECOND_* twins make the per-second store's URL; false (its
// default) makes none, whatever they say.
TEST(ErlEnvironment, PerSecondRedisVariablesMakeTheSecondUrl) {
    auto vars = testing::deployment_env();
    vars["REDIS_PERSECOND_SOCKET_TYPE"] = "tcp";
    vars["REDIS_PERSECOND_URL"] = "redis-persecond:6380";
    EXPECT_EQ(mapped(vars).overlay.count("RATELIMITD_REDIS_PER_SECOND_URL"), 0u);
    vars["REDIS_PERSECOND"] = "true";
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_REDIS_PER_SECOND_URL"), "redis://redis-persecond:6380");
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_REDIS_URL"), "redis://redis:6379");
    vars["REDIS_PERSECOND_AUTH"] = "ps:s3cret";
    vars["REDIS_PERSECOND_TLS"] = "true";
    vars["REDIS_PERSECOND_TYPE"] = "cluster";
    vars["REDIS_PERSECOND_URL"] = "10.0.0.1:7000,10.0.0.2:7000";
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_REDIS_PER_SECOND_URL"),
              "rediss-cluster://ps:s3cret@10.0.0.1:7000,10.0.0.2:7000");
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_REDIS_URL"), "redis://redis:6379") << "REDIS_URL's own";
    vars["REDIS_PERSECOND_TYPE"] = "sentinel";
    vars["REDIS_PERSECOND_TLS"] = "false";
    vars["REDIS_PERSECOND_URL"] = "ps-master,10.0.0.3:26379";
    vars["REDIS_PERSECOND_SENTINEL_AUTH"] = "s4";
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_REDIS_PER_SECOND_URL"),
              "redis-sentinel://ps:s3cret@10.0.0.3:26379/ps-master?sentinel_password=s4");
}

// Its refusals name the per-second variable, and never echo its secret.
TEST(ErlEnvironment, PerSecondRedisRefusalsNameTheirVariable) {
    const auto refusal = [](std::map<std::string, std::string> vars) {
        const auto mode = map_erl_environment(testing::lookup(vars), "/");
        return mode.has_value() ? std::string("accepted") : mode.error().detail;
    };
    auto vars = testing::deployment_env();
    vars["REDIS_PERSECOND"] = "true";
    EXPECT_EQ(refusal(vars).rfind("REDIS_PERSECOND_SOCKET_TYPE: unix (its default) is not supported", 0), 0u)
        << refusal(vars);
    vars["REDIS_PERSECOND_SOCKET_TYPE"] = "tcp";
    vars["REDIS_PERSECOND_URL"] = "no-port";
    vars["REDIS_PERSECOND_AUTH"] = "hunter2-secret";
    EXPECT_EQ(refusal(vars).rfind("REDIS_PERSECOND_URL: expected host:port", 0), 0u) << refusal(vars);
    EXPECT_EQ(refusal(vars).find("hunter2"), std::string::npos);
    vars["REDIS_PERSECOND_URL"] = "a:1,b:2";
    EXPECT_EQ(refusal(vars).rfind("REDIS_PERSECOND_URL: REDIS_PERSECOND_TYPE=single expects one host:port", 0), 0u)
        << refusal(vars);
    vars["REDIS_PERSECOND_URL"] = "a:1";
    vars["REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR"] = "ERROR";
    EXPECT_EQ(refusal(vars).rfind("REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR: ", 0), 0u) << refusal(vars);
}

TEST(ErlEnvironment, ASecretIsNeverEchoed) {
    auto vars = testing::deployment_env();
    vars["REDIS_URL"] = "redis-without-port";
    vars["REDIS_AUTH"] = "hunter2-secret";
    const auto refused = map_erl_environment(testing::lookup(vars), "/");
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().detail.find("hunter2"), std::string::npos);
}

TEST(ErlEnvironment, UnixSocketsAtTheirDefaultAreRefusedByName) {
    std::map<std::string, std::string> vars{{"USE_STATSD", "false"}};
    const auto refused = map_erl_environment(testing::lookup(vars), "/");
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().detail.rfind("REDIS_SOCKET_TYPE: unix (its default) is not supported", 0), 0u)
        << refused.error().detail;
}

TEST(ErlEnvironment, StopCacheKeyIncrementRefusesDeniedCalls) {
    auto vars = testing::deployment_env();
    vars["STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"] = "true";
    EXPECT_FALSE(mapped(vars).charge_denied);
}

TEST(ErlEnvironment, ShadowModeTurnsOnTheGlobalShadowSetting) {
    auto vars = testing::deployment_env();
    EXPECT_EQ(mapped(vars).overlay.count("RATELIMITD_ENVOY_SHADOW_MODE"), 0u);
    vars["SHADOW_MODE"] = "true";
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_ENVOY_SHADOW_MODE"), "on");
}

// envoyproxy/ratelimit answers a store error with a gRPC error; REDIS_ERROR_ANSWER (ERL mode's
// own) chooses otherwise, in the codes of the answer, any case; anything else is refused by name.
TEST(ErlEnvironment, RedisErrorAnswerChoosesTheStoreErrorSetting) {
    auto vars = testing::deployment_env();
    EXPECT_EQ(mapped(vars).overlay.count("RATELIMITD_ENVOY_STORE_ERROR"), 0u) << "the setting's default: unavailable";
    for (const auto& [answer, setting] : std::vector<std::pair<std::string, std::string>>{
             {"UNAVAILABLE", "unavailable"}, {"ok", "allow"}, {"Over_Limit", "deny"}}) {
        vars["REDIS_ERROR_ANSWER"] = answer;
        EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_ENVOY_STORE_ERROR"), setting) << answer;
    }
    vars["REDIS_ERROR_ANSWER"] = "allow";
    const auto mode = map_erl_environment(testing::lookup(vars), "/");
    ASSERT_FALSE(mode.has_value());
    EXPECT_EQ(mode.error().detail, "REDIS_ERROR_ANSWER: expected UNAVAILABLE, OK or OVER_LIMIT, got \"allow\"");
}

TEST(ErlEnvironment, QuotaModeTurnsOnTheGlobalQuotaSetting) {
    auto vars = testing::deployment_env();
    EXPECT_EQ(mapped(vars).overlay.count("RATELIMITD_ENVOY_QUOTA_MODE"), 0u);
    vars["QUOTA_MODE"] = "true";
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_ENVOY_QUOTA_MODE"), "on");
}

// Its default adds no header to the client's response; enabled, its three by its names.
TEST(ErlEnvironment, ResponseHeadersAreNoneUnlessEnabledThenErlsByItsNames) {
    auto vars = testing::deployment_env();
    EXPECT_EQ(mapped(vars).overlay.at("RATELIMITD_GRPC_RESPONSE_HEADERS"), "none");
    vars["LIMIT_RESPONSE_HEADERS_ENABLED"] = "true";
    auto mode = mapped(vars);
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_RESPONSE_HEADERS"), "erl");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_LIMIT_HEADER"), "RateLimit-Limit");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_REMAINING_HEADER"), "RateLimit-Remaining");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_RESET_HEADER"), "RateLimit-Reset");
    EXPECT_TRUE(mode.warnings.empty()) << mode.warnings.front();
    vars["LIMIT_LIMIT_HEADER"] = "X-Limit";
    vars["LIMIT_REMAINING_HEADER"] = "X-Remaining";
    vars["LIMIT_RESET_HEADER"] = "X-Reset";
    mode = mapped(vars);
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_LIMIT_HEADER"), "X-Limit");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_REMAINING_HEADER"), "X-Remaining");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_RESET_HEADER"), "X-Reset");
}

TEST(ErlEnvironment, ListenersPrometheusAndLogging) {
    auto vars = testing::deployment_env();
    vars["HOST"] = "::";
    vars["PORT"] = "9080";
    vars["DEBUG_HOST"] = "127.0.0.1";
    vars["USE_PROMETHEUS"] = "true";
    vars["PROMETHEUS_ADDR"] = ":19001";
    vars["LOG_LEVEL"] = "WARNING";
    vars["LOG_FORMAT"] = "JSON";
    vars["RUNTIME_ROOT"] = "runtime";  // relative: from the working directory
    const ErlMode mode = mapped(vars);
    EXPECT_EQ(mode.overlay.at("RATELIMITD_LISTEN"), "[::]:9080");
    EXPECT_EQ(mode.debug_listen, "127.0.0.1:6070");
    EXPECT_EQ(mode.prometheus_listen, "0.0.0.0:19001");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_LOG_LEVEL"), "warn");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_LOG_FORMAT"), "json");
    EXPECT_EQ(mode.runtime->root, "/srv/runtime");
}

// Envoy Gateway's managed rate limit Deployment (internal/infrastructure/kubernetes/ratelimit/
// resource.go): xDS config, TLS on the gRPC listener and to the control plane, Prometheus.
TEST(ErlEnvironment, EnvoyGatewaysDeploymentIsAccepted) {
    const std::map<std::string, std::string> vars{
        {"RUNTIME_ROOT", "/data"},
        {"RUNTIME_SUBDIRECTORY", "ratelimit"},
        {"RUNTIME_IGNOREDOTFILES", "true"},
        {"RUNTIME_WATCH_ROOT", "false"},
        {"LOG_LEVEL", "info"},
        {"USE_STATSD", "false"},
        {"CONFIG_TYPE", "GRPC_XDS_SOTW"},
        {"CONFIG_GRPC_XDS_SERVER_URL", "envoy-gateway:18001"},
        {"CONFIG_GRPC_XDS_NODE_ID", "envoy-ratelimit"},
        {"GRPC_SERVER_USE_TLS", "true"},
        {"GRPC_SERVER_TLS_CERT", "/certs/tls.crt"},
        {"GRPC_SERVER_TLS_KEY", "/certs/tls.key"},
        {"GRPC_SERVER_TLS_CA_CERT", "/certs/ca.crt"},  // not one of ERL's variables: ERL ignores it too
        {"CONFIG_GRPC_XDS_SERVER_USE_TLS", "true"},
        {"CONFIG_GRPC_XDS_CLIENT_TLS_CERT", "/certs/tls.crt"},
        {"CONFIG_GRPC_XDS_CLIENT_TLS_KEY", "/certs/tls.key"},
        {"CONFIG_GRPC_XDS_SERVER_TLS_CACERT", "/certs/ca.crt"},
        {"FORCE_START_WITHOUT_INITIAL_CONFIG", "true"},
        {"REDIS_SOCKET_TYPE", "tcp"},
        {"REDIS_URL", "redis.redis-system.svc.cluster.local:6379"},
        {"USE_PROMETHEUS", "true"},
        {"PROMETHEUS_ADDR", ":19001"},
        {"PROMETHEUS_MAPPER_YAML", "/etc/statsd-exporter/conf.yaml"},
    };
    const ErlMode mode = mapped(vars);
    EXPECT_FALSE(mode.runtime.has_value()) << "xDS: no runtime directory";
    EXPECT_EQ(mode.overlay.at("RATELIMITD_XDS_SERVER"), "envoy-gateway:18001");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_XDS_NODE_ID"), "envoy-ratelimit");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_XDS_TLS"), "on");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_XDS_TLS_CA"), "/certs/ca.crt");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_XDS_TLS_CERT"), "/certs/tls.crt");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_XDS_TLS_KEY"), "/certs/tls.key");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_XDS_RETRY_INTERVAL"), "3000ms");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_TLS"), "on");
    EXPECT_EQ(mode.overlay.at("RATELIMITD_GRPC_TLS_CERT"), "/certs/tls.crt");
    EXPECT_EQ(mode.overlay.count("RATELIMITD_GRPC_TLS_CLIENT_CA"), 0u);
    EXPECT_EQ(mode.overlay.at("RATELIMITD_REDIS_URL"), "redis://redis.redis-system.svc.cluster.local:6379");
    EXPECT_EQ(mode.prometheus_listen, "0.0.0.0:19001");
    EXPECT_TRUE(mode.warnings.empty());
    EXPECT_TRUE(mode.stats.counted);
    EXPECT_TRUE(mode.stats.prometheus);
    EXPECT_FALSE(mode.stats.statsd);
    EXPECT_EQ(mode.stats.mapper_file, "/etc/statsd-exporter/conf.yaml");
}

TEST(ErlEnvironment, StartedAsRatelimit) {
    EXPECT_TRUE(started_as_ratelimit("/bin/ratelimit"));
    EXPECT_TRUE(started_as_ratelimit("ratelimit"));
    EXPECT_FALSE(started_as_ratelimit("/usr/bin/ratelimitd"));
    EXPECT_FALSE(started_as_ratelimit("/bin/ratelimit/x"));
    EXPECT_FALSE(started_as_ratelimit(nullptr));
}

}  // namespace
}  // namespace ratelimitd::erl
