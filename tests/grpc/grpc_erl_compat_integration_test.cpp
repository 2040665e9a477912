// envoyproxy/ratelimit's integration tests (test/integration/integration_test.go) against
// ratelimitd in ERL mode: its runtime directory (tests/data/erl-tests/integration/, verbatim),
// its settings as ERL variables, a real redis-server, and every answer its tests assert, field by
// field. Its per-second Redis variants (REDIS_PERSECOND=true) are in
// grpc_erl_compat_per_second_test.cpp. Test names:
// ErlCompat.Integration_<its Go test>_<its subtest>.
#include "grpc/erl_compat_integration_fixture.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ratelimitd::test::grpc_erl_compat_integration_test {
namespace {

namespace fs = std::filesystem;

using ErlCompatIntegration = ErlCompatIntegrationTest;

TEST_F(ErlCompatIntegration, Integration_TestBasicConfig_WithoutPerSecondRedis) { run_basic_config(false); }

TEST_F(ErlCompatIntegration, Integration_TestBasicConfig_WithoutPerSecondRedisWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    run_basic_config(false);
}

// CACHE_KEY_PREFIX: the same answers, every counter under the prefix.
TEST_F(ErlCompatIntegration, Integration_TestBasicConfig_WithoutPerSecondRedisWithCachePrefix) {
    vars_["CACHE_KEY_PREFIX"] = "prefix:";
    run_basic_config(false);
    const auto keys = redis_.keys();
    ASSERT_FALSE(keys.empty());
    int key3_counters = 0;
    for (const auto& k : keys) {
        EXPECT_EQ(k.rfind("prefix:", 0), 0u) << k;
        if (k.rfind("prefix:another_key3_", 0) == 0) {
            ++key3_counters;
            EXPECT_EQ(redis_.command({"GET", k}), "15") << k;
        }
    }
    EXPECT_EQ(key3_counters, 1);
}

TEST_F(ErlCompatIntegration, Integration_TestBasicConfig_WithoutPerSecondRedisWithstopCacheKeyIncrementWhenOverlimitConfig) {
    vars_["STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"] = "true";
    run_basic_config(true);
}

TEST_F(ErlCompatIntegration,
       Integration_TestBasicConfig_WithoutPerSecondRedisWithLocalCacheAndstopCacheKeyIncrementWhenOverlimitConfig) {
    vars_["STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"] = "true";
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    run_basic_config(true);
}

// TestBasicAuthConfig/WithoutPerSecondRedisAuth: a Redis that requires AUTH (REDIS_AUTH).
TEST_F(ErlCompatIntegration, Integration_TestBasicAuthConfig_WithoutPerSecondRedisAuth) { serve_with_auth(false); }

TEST_F(ErlCompatIntegration, Integration_TestBasicAuthConfig_WithoutPerSecondRedisAuthWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    serve_with_auth(false);
}

// TestBasicAuthConfigWithRedisCluster/WithoutPerSecondRedisAuth: REDIS_TYPE=cluster, three
// primaries requiring AUTH; the two-descriptor calls cross slots, as there.
TEST_F(ErlCompatIntegration, Integration_TestBasicAuthConfigWithRedisCluster_WithoutPerSecondRedisAuth) {
    serve_on_cluster(false);
}

TEST_F(ErlCompatIntegration,
       Integration_TestBasicAuthConfigWithRedisCluster_WithoutPerSecondRedisAuthWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    serve_on_cluster(false);
}

// TestBasicAuthConfigWithRedisSentinel/WithoutPerSecondRedisAuth: REDIS_TYPE=sentinel, the
// master found through a sentinel (its test adds AUTH, which the sentinel helper here lacks;
// AUTH is TestBasicAuthConfig's).
TEST_F(ErlCompatIntegration, Integration_TestBasicAuthConfigWithRedisSentinel_WithoutPerSecondRedis) {
    serve_behind_sentinel(false);
}

TEST_F(ErlCompatIntegration,
       Integration_TestBasicAuthConfigWithRedisSentinel_WithoutPerSecondRedisWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    serve_behind_sentinel(false);
}

// TestBasicTLSConfig: Redis over TLS (REDIS_TLS, REDIS_TLS_CACERT) with AUTH, and with a client
// certificate the server requires (REDIS_TLS_CLIENT_CERT, REDIS_TLS_CLIENT_KEY).
TEST_F(ErlCompatIntegration, Integration_TestBasicTLSConfig_WithoutPerSecondRedisTLS) { serve_over_tls(false); }

TEST_F(ErlCompatIntegration, Integration_TestBasicTLSConfig_WithoutPerSecondRedisTLSWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    serve_over_tls(false);
}

TEST_F(ErlCompatIntegration, Integration_TestBasicTLSConfig_WithoutPerSecondRedisTLSWithClientCert) {
    serve_over_tls(true);
}

// TestBasicReloadConfig/BasicWithoutWatchRoot: the same answers watching the config directory.
TEST_F(ErlCompatIntegration, Integration_TestBasicReloadConfig_BasicWithoutWatchRoot) {
    vars_["RUNTIME_WATCH_ROOT"] = "false";
    run_basic_config(false);
}

// TestBasicReloadConfig/ReloadWithoutWatchRoot: domain "reload" is unknown until reload.yaml is
// added (its block rule answers OK, no limit); then key1 is 50/s; removing it reloads again.
TEST_F(ErlCompatIntegration, Integration_TestBasicReloadConfig_ReloadWithoutWatchRoot) {
    vars_["RUNTIME_WATCH_ROOT"] = "false";
    ASSERT_NO_FATAL_FAILURE(serve());
    const RlsResponse before = call("reload", {{{"block", "foo"}}});
    EXPECT_EQ(before.overall_code(), OK);
    EXPECT_EQ(before.statuses(0).code(), OK);
    EXPECT_FALSE(before.statuses(0).has_current_limit());

    fs::copy_file(runtime_files() / "reload.yaml", dir_ / "reload.yaml");
    fs::rename(dir_ / "reload.yaml", config_dir() / "reload.yaml");
    ASSERT_TRUE(wait_until([&] { return call("reload", {{{"key1", "foo"}}}).statuses(0).has_current_limit(); },
                           process_start_bound))
        << process_.log();
    fresh_counters();
    const RlsResponse after = call("reload", {{{"key1", "bar"}}});
    EXPECT_EQ(after.overall_code(), OK);
    expect_status(after, 0, OK, 50, RlsResponse::RateLimit::SECOND, 49);

    fs::remove(config_dir() / "reload.yaml");
    EXPECT_TRUE(wait_until([&] { return !call("reload", {{{"key1", "foo"}}}).statuses(0).has_current_limit(); },
                           process_start_bound))
        << "removing the file reloads";
}

// TestShareThreshold: files/* share one 10/h budget (b.csv over after ten a.pdf); files_no_share/*
// values each count on their own (9 left each).
TEST_F(ErlCompatIntegration, Integration_TestShareThreshold_WithoutPerSecondRedis) {
    ASSERT_NO_FATAL_FAILURE(serve());
    RlsResponse shared;
    for (int attempt = 0; attempt < 3; ++attempt) {  // again should an hour begin between the calls
        fresh_counters();
        const std::int64_t hour = epoch_seconds() / 3600;
        for (int i = 0; i < 10; ++i) call("share-threshold-test", {{{"files", "files/a.pdf"}}});
        shared = call("share-threshold-test", {{{"files", "files/b.csv"}}});
        if (epoch_seconds() / 3600 == hour) break;
    }
    EXPECT_EQ(shared.overall_code(), OVER);
    expect_status(shared, 0, OVER, 10, RlsResponse::RateLimit::HOUR, 0);
    for (int i = 0; i < 10; ++i) {
        const RlsResponse own =
            call("share-threshold-test", {{{"files_no_share", "files_no_share/" + std::to_string(i)}}});
        EXPECT_EQ(own.overall_code(), OK);
        expect_status(own, 0, OK, 10, RlsResponse::RateLimit::HOUR, 9);
    }
}

// --- TestXdsProviderBasicConfig and TestXdsProviderBasicConfigReload: the same domains from an
// xDS control plane (CONFIG_TYPE=GRPC_XDS_SOTW), as xds_sotw_integration_test.go sends them.

TEST_F(ErlCompatIntegration, Integration_TestXdsProviderBasicConfig_WithoutPerSecondRedis) {
    ASSERT_NO_FATAL_FAILURE(serve_from_xds(xds_basic_domains()));
    hold_basic_scenario(false);
}

TEST_F(ErlCompatIntegration, Integration_TestXdsProviderBasicConfig_WithoutPerSecondRedisWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    ASSERT_NO_FATAL_FAILURE(serve_from_xds(xds_basic_domains()));
    hold_basic_scenario(false);
}

// A new snapshot adds domain "reload" (key1 50/s, block 0/s); the next one takes it away again.
TEST_F(ErlCompatIntegration, Integration_TestXdsProviderBasicConfigReload_ReloadConfigWithXdsServer) {
    using namespace ratelimit::config::ratelimit::v3;
    ASSERT_NO_FATAL_FAILURE(serve_from_xds(xds_basic_domains()));
    const RlsResponse before = call("reload", {{{"block", "foo"}}});
    EXPECT_EQ(before.overall_code(), OK);
    EXPECT_FALSE(before.statuses(0).has_current_limit());

    auto with_reload = xds_basic_domains();
    with_reload.push_back(xds_domain("reload", {{"key1", SECOND, 50}, {"block", SECOND, 0}, {"one_per_minute", MINUTE, 1}}));
    xds_->set("v2", with_reload);
    ASSERT_TRUE(wait_until([&] { return limit_of("reload", {{"block", "x"}}) == "0/SECOND"; }, process_start_bound))
        << process_.log();
    fresh_counters();
    const RlsResponse after = call("reload", {{{"key1", "foo"}}});
    EXPECT_EQ(after.overall_code(), OK);
    expect_status(after, 0, OK, 50, RlsResponse::RateLimit::SECOND, 49);

    xds_->set("v3", xds_basic_domains());
    EXPECT_TRUE(wait_until([&] { return limit_of("reload", {{"key1", "foo"}}) == "none"; }, process_start_bound))
        << process_.log();
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_compat_integration_test
