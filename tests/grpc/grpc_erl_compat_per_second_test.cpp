// envoyproxy/ratelimit's integration tests with its per-second Redis (REDIS_PERSECOND=true), the
// WithPerSecondRedis* subtests of test/integration/integration_test.go, against ratelimitd in
// ERL mode with two real redis-servers (two clusters, two sentinels): every answer those tests
// assert, and where each counter went (the SECOND limit's in the per-second Redis, the others
// in REDIS_URL's; ErlCompatIntegrationTest::expect_per_second_split).
#include "grpc/erl_compat_integration_fixture.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace ratelimitd::test::grpc_erl_compat_per_second_test {
namespace {

using namespace std::chrono_literals;

class ErlCompatPerSecond : public ErlCompatIntegrationTest {
protected:
    /// makeSimpleRedisSettings(…, perSecond = true, …): a plain second Redis.
    void use_second_redis() {
        per_second_redis_.emplace();
        use_per_second("127.0.0.1:" + std::to_string(per_second_redis_->port()), keys_of(*per_second_redis_),
                       keys_of(redis_));
    }
    void use_local_cache() {
        vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "1000";
        local_cache_ = true;
    }
    void run_from_xds() {
        ASSERT_NO_FATAL_FAILURE(serve_from_xds(xds_basic_domains()));
        hold_basic_scenario(false);
        expect_per_second_split();
    }
};

TEST_F(ErlCompatPerSecond, Integration_TestBasicConfig_WithPerSecondRedis) {
    use_second_redis();
    run_basic_config(false);
}

TEST_F(ErlCompatPerSecond, Integration_TestBasicConfig_WithPerSecondRedisWithLocalCache) {
    use_second_redis();
    use_local_cache();
    run_basic_config(false);
}

TEST_F(ErlCompatPerSecond, Integration_TestBasicConfig_WithPerSecondRedisWithstopCacheKeyIncrementWhenOverlimitConfig) {
    vars_["STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"] = "true";
    use_second_redis();
    run_basic_config(true);
}

TEST_F(ErlCompatPerSecond,
       Integration_TestBasicConfig_WithPerSecondRedisWithLocalCacheAndstopCacheKeyIncrementWhenOverlimitConfig) {
    vars_["STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"] = "true";
    use_second_redis();
    use_local_cache();
    run_basic_config(true);
}

TEST_F(ErlCompatPerSecond, Integration_TestXdsProviderBasicConfig_WithPerSecondRedis) {
    use_second_redis();
    run_from_xds();
}

TEST_F(ErlCompatPerSecond, Integration_TestXdsProviderBasicConfig_WithPerSecondRedisWithLocalCache) {
    use_second_redis();
    use_local_cache();
    run_from_xds();
}

TEST_F(ErlCompatPerSecond, Integration_TestBasicTLSConfig_WithPerSecondRedisTLS) { serve_over_tls(false, true); }

TEST_F(ErlCompatPerSecond, Integration_TestBasicTLSConfig_WithPerSecondRedisTLSWithLocalCache) {
    use_local_cache();
    serve_over_tls(false, true);
}

TEST_F(ErlCompatPerSecond, Integration_TestBasicAuthConfig_WithPerSecondRedisAuth) { serve_with_auth(true); }

TEST_F(ErlCompatPerSecond, Integration_TestBasicAuthConfig_WithPerSecondRedisAuthWithLocalCache) {
    use_local_cache();
    serve_with_auth(true);
}

TEST_F(ErlCompatPerSecond, Integration_TestBasicAuthConfigWithRedisCluster_WithPerSecondRedisAuth) {
    serve_on_cluster(true);
}

TEST_F(ErlCompatPerSecond, Integration_TestBasicAuthConfigWithRedisCluster_WithPerSecondRedisAuthWithLocalCache) {
    use_local_cache();
    serve_on_cluster(true);
}

TEST_F(ErlCompatPerSecond, Integration_TestBasicAuthConfigWithRedisSentinel_WithPerSecondRedisAuth) {
    serve_behind_sentinel(true);
}

TEST_F(ErlCompatPerSecond, Integration_TestBasicAuthConfigWithRedisSentinel_WithPerSecondRedisAuthWithLocalCache) {
    use_local_cache();
    serve_behind_sentinel(true);
}

/// The count of the one counter of `server` whose key starts with `prefix`; -1 when none or several.
long long count_with_prefix(const RedisServer& server, const std::string& prefix) {
    std::string found;
    for (const auto& k : server.keys()) {
        if (k.rfind(prefix, 0) != 0) continue;
        if (!found.empty()) return -1;
        found = k;
    }
    return found.empty() ? -1 : server.integer({"GET", found});
}

// One call whose descriptors live in both Redis (domain basic: key1 50/s, one_per_minute 1/min),
// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=true: the second call takes one_per_minute past its
// limit, so only it is charged (envoyproxy/ratelimit GETs both Redis, then INCRBYs the one that
// goes over): key1 answers its count unchanged.
TEST_F(ErlCompatPerSecond, ACallAcrossBothRedisChargesAsOneRedisWould) {
    vars_["STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"] = "true";
    use_second_redis();
    ASSERT_NO_FATAL_FAILURE(serve());
    in_one_window(1s, [&](int attempt) {  // a second that began between them restarts key1's count
        const std::string v = "x" + std::to_string(attempt);
        const RlsResponse first = call("basic", {{{"key1", v}}, {{"one_per_minute", v}}});
        const RlsResponse again = call("basic", {{{"key1", v}}, {{"one_per_minute", v}}});
        EXPECT_EQ(first.overall_code(), OK);
        expect_status(first, 0, OK, 50, RlsResponse::RateLimit::SECOND, 49);
        expect_status(first, 1, OK, 1, RlsResponse::RateLimit::MINUTE, 0);
        EXPECT_EQ(again.overall_code(), OVER);
        expect_status(again, 0, OK, 50, RlsResponse::RateLimit::SECOND, 49);
        expect_status(again, 1, OVER, 1, RlsResponse::RateLimit::MINUTE, 0);
        EXPECT_EQ(count_with_prefix(*per_second_redis_, "basic_key1_" + v + "_"), 1);
        EXPECT_EQ(count_with_prefix(redis_, "basic_one_per_minute_" + v + "_"), 2);
        EXPECT_EQ(count_with_prefix(redis_, "basic_key1_"), -1) << "no per-second counter in REDIS_URL's Redis";
    });
}

// The same call with envoyproxy/ratelimit's default accounting: both charged on every call.
TEST_F(ErlCompatPerSecond, ACallAcrossBothRedisChargesBothByDefault) {
    use_second_redis();
    ASSERT_NO_FATAL_FAILURE(serve());
    in_one_window(1s, [&](int attempt) {
        const std::string v = "y" + std::to_string(attempt);
        call("basic", {{{"key1", v}}, {{"one_per_minute", v}}});
        const RlsResponse again = call("basic", {{{"key1", v}}, {{"one_per_minute", v}}});
        EXPECT_EQ(again.overall_code(), OVER);
        expect_status(again, 0, OK, 50, RlsResponse::RateLimit::SECOND, 48);
        expect_status(again, 1, OVER, 1, RlsResponse::RateLimit::MINUTE, 0);
        EXPECT_EQ(count_with_prefix(*per_second_redis_, "basic_key1_" + v + "_"), 2);
        EXPECT_EQ(count_with_prefix(redis_, "basic_one_per_minute_" + v + "_"), 2);
    });
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_compat_per_second_test
