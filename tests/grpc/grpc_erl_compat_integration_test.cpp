// envoyproxy/ratelimit's integration tests (test/integration/integration_test.go) against
// ratelimitd in ERL mode: its runtime directory (tests/data/erl-tests/integration/, verbatim),
// its settings as ERL variables, a real redis-server, and every answer its tests assert, field by
// field. Its per-second Redis variants (REDIS_PERSECOND=true) are refused here by name
// (docs/envoy.md); their answers are the same as the variants below. Test names:
// ErlCompat.Integration_<its Go test>_<its subtest>.
#include "grpc/erl_mode_fixture.hpp"
#include "grpc/xds_control_plane.hpp"
#include "support/sentinel.hpp"
#include "support/tls_certs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ratelimitd::test {
namespace {

namespace fs = std::filesystem;
using Unit = RlsResponse::RateLimit::Unit;
constexpr auto OK = RlsResponse::OK;
constexpr auto OVER = RlsResponse::OVER_LIMIT;

const fs::path runtime_files = fs::path(RATELIMITD_TEST_DATA_DIR) / "erl-tests" / "integration";

class ErlCompatIntegration : public ErlModeTest {
protected:
    explicit ErlCompatIntegration(std::string redis_password = {}) : ErlModeTest(std::move(redis_password)) {}

    void SetUp() override {
        ErlModeTest::SetUp();
        vars_["RUNTIME_WATCH_ROOT"] = "true";  // its settings' default
        for (const char* f : {"basic.yaml", "another.yaml", "share_threshold.yaml"}) {
            add_config(runtime_files / "config" / f);
        }
    }
    /// Its getCacheKey: the `_local` twin of each key when the local cache is on.
    std::string key(const std::string& base) const { return local_cache_ ? base + "_local" : base; }

    /// Status `i` is {code, per_unit/unit, remaining}, with a reset within the unit.
    static void expect_status(const RlsResponse& res, int i, RlsResponse::Code code, std::uint32_t per_unit, Unit unit,
                              std::uint32_t remaining) {
        ASSERT_GT(res.statuses_size(), i) << res.DebugString();
        const auto& s = res.statuses(i);
        EXPECT_EQ(s.code(), code) << res.DebugString();
        EXPECT_EQ(s.current_limit().requests_per_unit(), per_unit) << res.DebugString();
        EXPECT_EQ(s.current_limit().unit(), unit) << res.DebugString();
        EXPECT_EQ(s.limit_remaining(), remaining) << res.DebugString();
    }

    /// testBasicBaseConfig's calls; false when a minute began meanwhile (its 20/min counts then
    /// restart, as they would there), so the caller runs them again.
    bool basic_scenario(bool stop_increment, const std::string& tag);
    /// Serves, then runs the scenario until one minute holds it.
    void run_basic_config(bool stop_increment) {
        ASSERT_NO_FATAL_FAILURE(serve());
        bool held = false;
        for (int attempt = 0; attempt < 3 && !held && !HasFailure(); ++attempt) held = basic_scenario(stop_increment, std::to_string(attempt));
        EXPECT_TRUE(held || HasFailure()) << "no minute held the calls";
    }

    bool local_cache_ = false;
};

// `tag` makes each attempt's values new: on a cluster or behind a sentinel nothing flushes them.
bool ErlCompatIntegration::basic_scenario(bool stop_increment, const std::string& tag) {
    fresh_counters();
    const std::int64_t minute = epoch_seconds() / 60;
    const RlsResponse none = call("foo", {{{key("hello"), "world"}}});
    EXPECT_EQ(none.overall_code(), OK);
    EXPECT_FALSE(none.statuses(0).has_current_limit());
    EXPECT_EQ(none.statuses(0).limit_remaining(), 0u);

    const RlsResponse basic = call("basic", {{{key("key1"), "foo" + tag}}});
    EXPECT_EQ(basic.overall_code(), OK);
    expect_status(basic, 0, OK, 50, RlsResponse::RateLimit::SECOND, 49);

    // 25 calls of one key2 value against 20/min: 20 OK counting down, then over.
    for (std::uint32_t i = 0; i < 25; ++i) {
        const RlsResponse r = call("another", {{{key("key2"), "v1-" + tag}}});
        const auto code = i >= 20 ? OVER : OK;
        EXPECT_EQ(r.overall_code(), code) << i;
        expect_status(r, 0, code, 20, RlsResponse::RateLimit::MINUTE, i >= 20 ? 0 : 20 - (i + 1));
    }
    // 15 calls of key2 (20/min) and key3 (10/h) together: key3 goes over at the 11th; with
    // STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT key2 is then no longer charged (10 left).
    for (std::uint32_t i = 0; i < 15; ++i) {
        const RlsResponse r = call("another", {{{key("key2"), "v2-" + tag}}, {{key("key3"), "v2-" + tag}}});
        const auto code = i >= 10 ? OVER : OK;
        const std::uint32_t key2_left = (stop_increment && i >= 10) ? 10 : 20 - (i + 1);
        EXPECT_EQ(r.overall_code(), code) << i;
        expect_status(r, 0, OK, 20, RlsResponse::RateLimit::MINUTE, key2_left);
        expect_status(r, 1, code, 10, RlsResponse::RateLimit::HOUR, i >= 10 ? 0 : 10 - (i + 1));
    }
    // DurationUntilReset: the day's remaining seconds.
    const std::int64_t before = epoch_seconds();
    const RlsResponse day = call("another", {{{key("key4"), "durTest" + tag}}});
    const std::int64_t after = epoch_seconds();
    EXPECT_GE(day.statuses(0).duration_until_reset().seconds(), 86400 - after % 86400);
    EXPECT_LE(day.statuses(0).duration_until_reset().seconds(), 86400 - before % 86400);
    return epoch_seconds() / 60 == minute;
}

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
class ErlCompatIntegrationAuth : public ErlCompatIntegration {
protected:
    ErlCompatIntegrationAuth() : ErlCompatIntegration("password123") {}
};

TEST_F(ErlCompatIntegrationAuth, Integration_TestBasicAuthConfig_WithoutPerSecondRedisAuth) {
    vars_["REDIS_AUTH"] = "password123";
    run_basic_config(false);
}

TEST_F(ErlCompatIntegrationAuth, Integration_TestBasicAuthConfig_WithoutPerSecondRedisAuthWithLocalCache) {
    vars_["REDIS_AUTH"] = "password123";
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    run_basic_config(false);
}

// TestBasicAuthConfigWithRedisCluster/WithoutPerSecondRedisAuth: REDIS_TYPE=cluster, three
// primaries requiring AUTH; the two-descriptor calls cross slots, as there.
class ErlCompatIntegrationCluster : public ErlCompatIntegration {
protected:
    void serve_on_cluster() {
        RedisCluster cluster(RedisClusterOptions{.password = "password123"});
        std::string nodes;
        for (int n = 0; n < cluster.size(); ++n) {
            nodes += (n == 0 ? "" : ",") + std::string("127.0.0.1:") + std::to_string(cluster.port(n));
        }
        vars_["REDIS_TYPE"] = "cluster";
        vars_["REDIS_URL"] = nodes;
        vars_["REDIS_AUTH"] = "password123";
        run_basic_config(false);
    }
};

TEST_F(ErlCompatIntegrationCluster, Integration_TestBasicAuthConfigWithRedisCluster_WithoutPerSecondRedisAuth) {
    serve_on_cluster();
}

TEST_F(ErlCompatIntegrationCluster,
       Integration_TestBasicAuthConfigWithRedisCluster_WithoutPerSecondRedisAuthWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    serve_on_cluster();
}

// TestBasicAuthConfigWithRedisSentinel/WithoutPerSecondRedisAuth: REDIS_TYPE=sentinel, the
// master found through a sentinel (its test adds AUTH, which the sentinel helper here lacks;
// AUTH is TestBasicAuthConfig's).
class ErlCompatIntegrationSentinel : public ErlCompatIntegration {
protected:
    void serve_behind_sentinel() {
        RedisSentinel sentinel("mymaster", redis_.port());
        vars_["REDIS_TYPE"] = "sentinel";
        vars_["REDIS_URL"] = "mymaster,127.0.0.1:" + std::to_string(sentinel.port());
        run_basic_config(false);
    }
};

TEST_F(ErlCompatIntegrationSentinel, Integration_TestBasicAuthConfigWithRedisSentinel_WithoutPerSecondRedis) {
    serve_behind_sentinel();
}

TEST_F(ErlCompatIntegrationSentinel,
       Integration_TestBasicAuthConfigWithRedisSentinel_WithoutPerSecondRedisWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    serve_behind_sentinel();
}

// TestBasicTLSConfig: Redis over TLS (REDIS_TLS, REDIS_TLS_CACERT) with AUTH, and with a client
// certificate the server requires (REDIS_TLS_CLIENT_CERT, REDIS_TLS_CLIENT_KEY).
class ErlCompatIntegrationTls : public ErlCompatIntegration {
protected:
    void serve_over_tls(bool client_cert) {
        static const TlsCerts certs;
        const unsigned short tls_port = free_port();
        tls_redis_.emplace("password123", certs.redis_args(tls_port, certs.server(), client_cert));
        vars_["REDIS_URL"] = "127.0.0.1:" + std::to_string(tls_port);
        vars_["REDIS_TLS"] = "true";
        vars_["REDIS_TLS_CACERT"] = certs.ca();
        vars_["REDIS_AUTH"] = "password123";
        if (client_cert) {
            vars_["REDIS_TLS_CLIENT_CERT"] = certs.client().cert;
            vars_["REDIS_TLS_CLIENT_KEY"] = certs.client().key;
        }
        run_basic_config(false);
    }
    std::optional<RedisServer> tls_redis_;
};

TEST_F(ErlCompatIntegrationTls, Integration_TestBasicTLSConfig_WithoutPerSecondRedisTLS) { serve_over_tls(false); }

TEST_F(ErlCompatIntegrationTls, Integration_TestBasicTLSConfig_WithoutPerSecondRedisTLSWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    serve_over_tls(false);
}

TEST_F(ErlCompatIntegrationTls, Integration_TestBasicTLSConfig_WithoutPerSecondRedisTLSWithClientCert) {
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

    fs::copy_file(runtime_files / "reload.yaml", dir_ / "reload.yaml");
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

using XdsUnit = ratelimit::config::ratelimit::v3::RateLimitUnit;
using XdsRule = std::tuple<std::string, XdsUnit, std::uint32_t>;

RateLimitConfig xds_domain(const std::string& domain, const std::vector<XdsRule>& rules) {
    RateLimitConfig c;
    c.set_name(domain);
    c.set_domain(domain);
    for (const auto& [key, unit, per_unit] : rules) {
        auto* d = c.add_descriptors();
        d->set_key(key);
        d->mutable_rate_limit()->set_unit(unit);
        d->mutable_rate_limit()->set_requests_per_unit(per_unit);
    }
    return c;
}

std::vector<RateLimitConfig> xds_basic_domains() {
    using namespace ratelimit::config::ratelimit::v3;
    return {xds_domain("basic", {{"key1", SECOND, 50}, {"key1_local", SECOND, 50}, {"one_per_minute", MINUTE, 1}}),
            xds_domain("another", {{"key2", MINUTE, 20},
                                   {"key3", HOUR, 10},
                                   {"key2_local", MINUTE, 20},
                                   {"key3_local", HOUR, 10},
                                   {"key4", DAY, 20},
                                   {"key4_local", DAY, 20}})};
}

class ErlCompatXds : public ErlCompatIntegration {
protected:
    void serve_from_xds(const std::vector<RateLimitConfig>& domains) {
        vars_["CONFIG_TYPE"] = "GRPC_XDS_SOTW";
        vars_["CONFIG_GRPC_XDS_SERVER_URL"] = cp_.address();
        cp_.set("v1", domains);
        ASSERT_NO_FATAL_FAILURE(serve());
        // Until the first snapshot is applied a call is an error, as there ("no rate limit
        // configuration loaded"): awaited without counting it as a failure.
        const RlsRequest probe = rls_request("basic", {Descriptor{{{"one_per_minute", "probe"}}, {}}});
        ASSERT_TRUE(wait_until([&] { return client_->code(probe) != RlsResponse::UNKNOWN; }, process_start_bound))
            << process_.log();
    }
    XdsControlPlane cp_;
};

TEST_F(ErlCompatXds, Integration_TestXdsProviderBasicConfig_WithoutPerSecondRedis) {
    ASSERT_NO_FATAL_FAILURE(serve_from_xds(xds_basic_domains()));
    bool held = false;
    for (int attempt = 0; attempt < 3 && !held && !HasFailure(); ++attempt) {
        held = basic_scenario(false, std::to_string(attempt));
    }
    EXPECT_TRUE(held || HasFailure()) << "no minute held the calls";
}

TEST_F(ErlCompatXds, Integration_TestXdsProviderBasicConfig_WithoutPerSecondRedisWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
    local_cache_ = true;
    ASSERT_NO_FATAL_FAILURE(serve_from_xds(xds_basic_domains()));
    bool held = false;
    for (int attempt = 0; attempt < 3 && !held && !HasFailure(); ++attempt) {
        held = basic_scenario(false, std::to_string(attempt));
    }
    EXPECT_TRUE(held || HasFailure()) << "no minute held the calls";
}

// A new snapshot adds domain "reload" (key1 50/s, block 0/s); the next one takes it away again.
TEST_F(ErlCompatXds, Integration_TestXdsProviderBasicConfigReload_ReloadConfigWithXdsServer) {
    using namespace ratelimit::config::ratelimit::v3;
    ASSERT_NO_FATAL_FAILURE(serve_from_xds(xds_basic_domains()));
    const RlsResponse before = call("reload", {{{"block", "foo"}}});
    EXPECT_EQ(before.overall_code(), OK);
    EXPECT_FALSE(before.statuses(0).has_current_limit());

    auto with_reload = xds_basic_domains();
    with_reload.push_back(xds_domain("reload", {{"key1", SECOND, 50}, {"block", SECOND, 0}, {"one_per_minute", MINUTE, 1}}));
    cp_.set("v2", with_reload);
    ASSERT_TRUE(wait_until([&] { return limit_of("reload", {{"block", "x"}}) == "0/SECOND"; }, process_start_bound))
        << process_.log();
    fresh_counters();
    const RlsResponse after = call("reload", {{{"key1", "foo"}}});
    EXPECT_EQ(after.overall_code(), OK);
    expect_status(after, 0, OK, 50, RlsResponse::RateLimit::SECOND, 49);

    cp_.set("v3", xds_basic_domains());
    EXPECT_TRUE(wait_until([&] { return limit_of("reload", {{"key1", "foo"}}) == "none"; }, process_start_bound))
        << process_.log();
}

}  // namespace
}  // namespace ratelimitd::test
