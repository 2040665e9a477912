// envoyproxy/ratelimit's integration test runner (test/integration/integration_test.go) on
// ratelimitd in ERL mode: its runtime directory (tests/data/erl-tests/integration/, verbatim),
// its testBasicBaseConfig calls with every answer they assert, and the places its variants put
// Redis (AUTH, TLS, a cluster, behind a sentinel) or the rules (an xDS control plane).
#pragma once

#include "grpc/erl_mode_fixture.hpp"
#include "grpc/xds_control_plane.hpp"
#include "support/held_window.hpp"
#include "support/sentinel.hpp"
#include "support/tls_certs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <sstream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace ratelimitd::test {

// TestXdsProviderBasicConfig's domains, as xds_sotw_integration_test.go sends them.
using XdsUnit = ratelimit::config::ratelimit::v3::RateLimitUnit;
using XdsRule = std::tuple<std::string, XdsUnit, std::uint32_t>;

inline RateLimitConfig xds_domain(const std::string& domain, const std::vector<XdsRule>& rules) {
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

inline std::vector<RateLimitConfig> xds_basic_domains() {
    using namespace ratelimit::config::ratelimit::v3;
    return {xds_domain("basic", {{"key1", SECOND, 50}, {"key1_local", SECOND, 50}, {"one_per_minute", MINUTE, 1}}),
            xds_domain("another", {{"key2", MINUTE, 20},
                                   {"key3", HOUR, 10},
                                   {"key2_local", MINUTE, 20},
                                   {"key3_local", HOUR, 10},
                                   {"key4", DAY, 20},
                                   {"key4_local", DAY, 20}})};
}


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

    /// testBasicBaseConfig's calls. `tag` makes each attempt's values new: on a cluster or
    /// behind a sentinel nothing flushes them.
    void basic_scenario(bool stop_increment, const std::string& tag) {
        fresh_counters();
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
    }
    /// Runs the scenario until one minute holds it (attempts_ counts the runs): a minute that
    /// began mid-attempt restarts the 20/min counts, and that attempt says nothing
    /// (in_one_window).
    void hold_basic_scenario(bool stop_increment) {
        in_one_window(std::chrono::minutes(1), [&](int n) {
            attempts_ = n + 1;
            basic_scenario(stop_increment, std::to_string(n));
        });
    }
    /// Serves, then runs the scenario until one minute holds it; with a per-second Redis, then
    /// checks where the counters went.
    void run_basic_config(bool stop_increment) {
        ASSERT_NO_FATAL_FAILURE(serve());
        hold_basic_scenario(stop_increment);
        if (per_second_keys_) expect_per_second_split();
    }

    /// The keys a store holds (a cluster: every primary's).
    using KeyLister = std::function<std::vector<std::string>()>;
    static KeyLister keys_of(const RedisServer& server) {
        return [&server] { return server.keys(); };
    }
    static KeyLister keys_of(const RedisCluster& cluster) {
        return [&cluster] {
            std::vector<std::string> out;
            for (int n = 0; n < cluster.size(); ++n) {
                std::istringstream words(cluster.command(n, {"KEYS", "*"}));
                for (std::string k; words >> k;) out.push_back(k);
            }
            return out;
        };
    }
    /// WithPerSecondRedis: REDIS_PERSECOND=true with the per-second Redis at `url` (its
    /// REDIS_PERSECOND_URL form), `type` its REDIS_PERSECOND_TYPE, `auth` its password.
    void use_per_second(const std::string& url, KeyLister per_second, KeyLister other, const std::string& type = "single",
                        const std::string& auth = {}) {
        vars_["REDIS_PERSECOND"] = "true";
        vars_["REDIS_PERSECOND_SOCKET_TYPE"] = "tcp";
        vars_["REDIS_PERSECOND_TYPE"] = type;
        vars_["REDIS_PERSECOND_URL"] = url;
        if (!auth.empty()) vars_["REDIS_PERSECOND_AUTH"] = auth;
        per_second_keys_ = std::move(per_second);
        other_keys_ = std::move(other);
    }
    /// The scenario's one SECOND limit is key1 (50/s): its counter is in the per-second Redis,
    /// the MINUTE, HOUR and DAY ones in the other, and neither holds a key of the other's kind.
    /// The last attempt's counters are counted exactly (earlier ones may have been flushed).
    void expect_per_second_split() const {
        const std::string tag = std::to_string(attempts_ - 1);
        const auto count = [](const std::vector<std::string>& keys, const std::string& prefix) {
            return std::count_if(keys.begin(), keys.end(), [&](const std::string& k) { return k.rfind(prefix, 0) == 0; });
        };
        const auto second = per_second_keys_();
        EXPECT_EQ(count(second, "basic_" + key("key1") + "_foo" + tag + "_"), 1) << ::testing::PrintToString(second);
        EXPECT_EQ(count(second, "another_"), 0) << ::testing::PrintToString(second);
        const auto other = other_keys_();
        EXPECT_EQ(count(other, "basic_"), 0) << ::testing::PrintToString(other);
        for (const std::string& counter : {key("key2") + "_v1-" + tag + "_", key("key2") + "_v2-" + tag + "_",
                                           key("key3") + "_v2-" + tag + "_", key("key4") + "_durTest" + tag + "_"}) {
            EXPECT_EQ(count(other, "another_" + counter), 1) << counter << " " << ::testing::PrintToString(other);
        }
    }

    /// TestBasicAuthConfig: a Redis that requires AUTH (REDIS_AUTH); WithPerSecondRedisAuth: a
    /// second one for the per-second limits (REDIS_PERSECOND_AUTH).
    void serve_with_auth(bool per_second) {
        own_redis_.emplace("password123");
        vars_["REDIS_URL"] = "127.0.0.1:" + std::to_string(own_redis_->port());
        vars_["REDIS_AUTH"] = "password123";
        if (per_second) {
            per_second_redis_.emplace("password123");
            use_per_second("127.0.0.1:" + std::to_string(per_second_redis_->port()), keys_of(*per_second_redis_),
                           keys_of(*own_redis_), "single", "password123");
        }
        run_basic_config(false);
    }
    /// TestBasicTLSConfig: Redis over TLS with AUTH (REDIS_TLS, REDIS_TLS_CACERT), and with a
    /// client certificate the server requires (REDIS_TLS_CLIENT_CERT, REDIS_TLS_CLIENT_KEY).
    /// WithPerSecondRedisTLS: a second one for the per-second limits, over TLS with AUTH too
    /// (REDIS_PERSECOND_TLS, REDIS_PERSECOND_AUTH; the same CA).
    void serve_over_tls(bool client_cert, bool per_second = false) {
        static const TlsCerts certs;
        const unsigned short tls_port = free_port();
        own_redis_.emplace("password123", certs.redis_args(tls_port, certs.server(), client_cert));
        vars_["REDIS_URL"] = "127.0.0.1:" + std::to_string(tls_port);
        vars_["REDIS_TLS"] = "true";
        vars_["REDIS_TLS_CACERT"] = certs.ca();
        vars_["REDIS_AUTH"] = "password123";
        if (per_second) {
            const unsigned short second_tls_port = free_port();
            per_second_redis_.emplace("password123", certs.redis_args(second_tls_port, certs.server(), client_cert));
            use_per_second("127.0.0.1:" + std::to_string(second_tls_port), keys_of(*per_second_redis_),
                           keys_of(*own_redis_), "single", "password123");
            vars_["REDIS_PERSECOND_TLS"] = "true";
        }
        if (client_cert) {
            vars_["REDIS_TLS_CLIENT_CERT"] = certs.client().cert;
            vars_["REDIS_TLS_CLIENT_KEY"] = certs.client().key;
        }
        run_basic_config(false);
    }
    /// TestBasicAuthConfigWithRedisCluster: REDIS_TYPE=cluster, three primaries requiring AUTH;
    /// the two-descriptor calls cross slots, as there.
    /// WithPerSecondRedisAuth: a second cluster for the per-second limits
    /// (REDIS_PERSECOND_TYPE=cluster).
    void serve_on_cluster(bool per_second) {
        const auto nodes_of = [](const RedisCluster& cluster) {
            std::string nodes;
            for (int n = 0; n < cluster.size(); ++n) {
                nodes += (n == 0 ? "" : ",") + std::string("127.0.0.1:") + std::to_string(cluster.port(n));
            }
            return nodes;
        };
        RedisCluster cluster(RedisClusterOptions{.password = "password123"});
        vars_["REDIS_TYPE"] = "cluster";
        vars_["REDIS_URL"] = nodes_of(cluster);
        vars_["REDIS_AUTH"] = "password123";
        std::optional<RedisCluster> second;
        if (per_second) {
            second.emplace(RedisClusterOptions{.password = "password123"});
            use_per_second(nodes_of(*second), keys_of(*second), keys_of(cluster), "cluster", "password123");
        }
        run_basic_config(false);
    }
    /// TestBasicAuthConfigWithRedisSentinel: REDIS_TYPE=sentinel, the master found through a
    /// sentinel (its test adds AUTH, which the sentinel helper here lacks; AUTH is
    /// TestBasicAuthConfig's).
    /// WithPerSecondRedis: a second master behind a second sentinel for the per-second limits
    /// (REDIS_PERSECOND_TYPE=sentinel).
    void serve_behind_sentinel(bool per_second) {
        RedisSentinel sentinel("mymaster", redis_.port());
        vars_["REDIS_TYPE"] = "sentinel";
        vars_["REDIS_URL"] = "mymaster,127.0.0.1:" + std::to_string(sentinel.port());
        std::optional<RedisSentinel> second;
        if (per_second) {
            per_second_redis_.emplace();
            second.emplace("mymaster", per_second_redis_->port());
            use_per_second("mymaster,127.0.0.1:" + std::to_string(second->port()), keys_of(*per_second_redis_),
                           keys_of(redis_), "sentinel");
        }
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
    int attempts_ = 0;  // of the last hold_basic_scenario
    std::optional<RedisServer> own_redis_;  // AUTH or TLS: the Redis its variant asks for
    std::optional<RedisServer> per_second_redis_;  // WithPerSecondRedis: REDIS_PERSECOND_URL's
    KeyLister per_second_keys_;  // set by use_per_second
    KeyLister other_keys_;
    std::optional<XdsControlPlane> xds_;
};

}  // namespace ratelimitd::test
