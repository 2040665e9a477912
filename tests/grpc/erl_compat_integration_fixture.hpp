// envoyproxy/ratelimit's integration test runner (test/integration/integration_test.go) on
// ratelimitd in ERL mode: its runtime directory (tests/data/erl-tests/integration/, verbatim),
// its testBasicBaseConfig calls with every answer they assert, and the places its variants put
// Redis (AUTH, TLS, a cluster, behind a sentinel) or the rules (an xDS control plane).
#pragma once

#include "grpc/erl_mode_fixture.hpp"
#include "grpc/xds_control_plane.hpp"
#include "support/sentinel.hpp"
#include "support/tls_certs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::test {

class ErlCompatIntegrationTest : public ErlModeTest {
protected:
    using Unit = RlsResponse::RateLimit::Unit;
    static constexpr auto OK = RlsResponse::OK;
    static constexpr auto OVER = RlsResponse::OVER_LIMIT;

    static std::filesystem::path runtime_files() {
        return std::filesystem::path(RATELIMITD_TEST_DATA_DIR) / "erl-tests" / "integration";
    }

    void SetUp() override {
        ErlModeTest::SetUp();
        vars_["RUNTIME_WATCH_ROOT"] = "true";  // its settings' default
        for (const char* f : {"basic.yaml", "another.yaml", "share_threshold.yaml"}) {
            add_config(runtime_files() / "config" / f);
        }
    }
    /// Its getCacheKey: the `_local` twin of each key when the local cache is on.
    std::string key(const std::string& base) const { return local_cache_ ? base + "_local" : base; }

    /// Status `i` is {code, per_unit/unit, remaining}.
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
    /// restart, as they would there), so the caller runs them again. `tag` makes each attempt's
    /// values new: on a cluster or behind a sentinel nothing flushes them.
    bool basic_scenario(bool stop_increment, const std::string& tag) {
        fresh_counters();
        const std::int64_t minute = epoch_seconds() / 60;
        const RlsResponse none = call("foo", {{{key("hello"), "world"}}});
        EXPECT_EQ(none.overall_code(), OK);
        EXPECT_FALSE(none.statuses(0).has_current_limit());
        EXPECT_EQ(none.statuses(0).limit_remaining(), 0u);
        expect_status(call("basic", {{{key("key1"), "foo" + tag}}}), 0, OK, 50, RlsResponse::RateLimit::SECOND, 49);

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
            EXPECT_EQ(r.overall_code(), code) << i;
            expect_status(r, 0, OK, 20, RlsResponse::RateLimit::MINUTE,
                          (stop_increment && i >= 10) ? 10 : 20 - (i + 1));
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
    /// Serves, then runs the scenario until one minute holds it.
    void run_basic_config(bool stop_increment) {
        ASSERT_NO_FATAL_FAILURE(serve());
        bool held = false;
        for (int attempt = 0; attempt < 3 && !held && !HasFailure(); ++attempt) {
            held = basic_scenario(stop_increment, std::to_string(attempt));
        }
        EXPECT_TRUE(held || HasFailure()) << "no minute held the calls";
    }

    /// TestBasicAuthConfig: a Redis that requires AUTH (REDIS_AUTH).
    void serve_with_auth() {
        own_redis_.emplace("password123");
        vars_["REDIS_URL"] = "127.0.0.1:" + std::to_string(own_redis_->port());
        vars_["REDIS_AUTH"] = "password123";
        run_basic_config(false);
    }
    /// TestBasicTLSConfig: Redis over TLS with AUTH (REDIS_TLS, REDIS_TLS_CACERT), and with a
    /// client certificate the server requires (REDIS_TLS_CLIENT_CERT, REDIS_TLS_CLIENT_KEY).
    void serve_over_tls(bool client_cert) {
        static const TlsCerts certs;
        const unsigned short tls_port = free_port();
        own_redis_.emplace("password123", certs.redis_args(tls_port, certs.server(), client_cert));
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
    /// TestBasicAuthConfigWithRedisCluster: REDIS_TYPE=cluster, three primaries requiring AUTH;
    /// the two-descriptor calls cross slots, as there.
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
    /// TestBasicAuthConfigWithRedisSentinel: REDIS_TYPE=sentinel, the master found through a
    /// sentinel (its test adds AUTH, which the sentinel helper here lacks; AUTH is
    /// TestBasicAuthConfig's).
    void serve_behind_sentinel() {
        RedisSentinel sentinel("mymaster", redis_.port());
        vars_["REDIS_TYPE"] = "sentinel";
        vars_["REDIS_URL"] = "mymaster,127.0.0.1:" + std::to_string(sentinel.port());
        run_basic_config(false);
    }
    /// CONFIG_TYPE=GRPC_XDS_SOTW: `domains` sent by a control plane, served once applied.
    void serve_from_xds(const std::vector<RateLimitConfig>& domains) {
        xds_.emplace();
        vars_["CONFIG_TYPE"] = "GRPC_XDS_SOTW";
        vars_["CONFIG_GRPC_XDS_SERVER_URL"] = xds_->address();
        xds_->set("v1", domains);
        ASSERT_NO_FATAL_FAILURE(serve());
        // Until the first snapshot is applied a call is an error, as there ("no rate limit
        // configuration loaded"): awaited without counting it as a failure.
        const RlsRequest probe = rls_request("basic", {Descriptor{{{"one_per_minute", "probe"}}, {}}});
        ASSERT_TRUE(wait_until([&] { return client_->code(probe) != RlsResponse::UNKNOWN; }, process_start_bound))
            << process_.log();
    }

    bool local_cache_ = false;
    std::optional<RedisServer> own_redis_;  // AUTH or TLS: the Redis its variant asks for
    std::optional<XdsControlPlane> xds_;
};

}  // namespace ratelimitd::test
