// envoyproxy/ratelimit's service tests (test/service/ratelimit_test.go) on the wire, quota mode
// aside (grpc_erl_compat_quota_test.cpp): overall and per-descriptor codes, shadow modes, its
// response headers, unlimited descriptors, the calls it refuses, a store error, a refused
// reload and the gRPC health service. Test names: ErlCompat.Service_<its Go test name>.
#include "grpc/erl_compat_service_fixture.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>

namespace ratelimitd::test::grpc_erl_compat_service_test {
namespace {

namespace fs = std::filesystem;
using ErlCompatService = ErlCompatServiceTest;
using Serving = grpc::health::v1::HealthCheckResponse;

// A domain it does not know answers OK, no limit; a descriptor over its limit beside one with
// no rule: OVER_LIMIT; a reload that fails keeps the config; the order of descriptors is kept.
TEST_F(ErlCompatService, Service_TestService) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    const RlsResponse unknown = fresh_call("test-domain", {hello_world}, {1});
    EXPECT_EQ(codes(unknown), "OK: OK");
    EXPECT_FALSE(unknown.statuses(0).has_current_limit());
    EXPECT_EQ(unknown.statuses(0).limit_remaining(), 0u);

    const RlsResponse over = fresh_call("different-domain", {foo_bar, hello_world}, {11, 1});
    EXPECT_EQ(codes(over), "OVER_LIMIT: OVER_LIMIT OK");
    EXPECT_EQ(over.statuses(0).current_limit().requests_per_unit(), 10u);
    EXPECT_EQ(over.statuses(0).limit_remaining(), 0u);
    EXPECT_FALSE(over.statuses(1).has_current_limit());

    // "Config load failure": the previous config keeps answering.
    fs::copy_file(fs::path(RATELIMITD_TEST_DATA_DIR) / "erl-tests" / "config" / "bad_limit_unit.yaml",
                  config_dir() / "bad_limit_unit.yaml");
    ASSERT_FALSE(process_.wait_for_log("reload refused", process_start_bound).empty()) << process_.log();
    const RlsResponse swapped = fresh_call("different-domain", {hello_world, foo_bar}, {1, 11});
    EXPECT_EQ(codes(swapped), "OVER_LIMIT: OK OVER_LIMIT");
    EXPECT_EQ(swapped.statuses(1).current_limit().requests_per_unit(), 10u);
}

// SHADOW_MODE=true: OK overall though a descriptor is OVER_LIMIT (which it still says).
TEST_F(ErlCompatService, Service_TestServiceGlobalShadowMode) {
    vars_["SHADOW_MODE"] = "true";
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    EXPECT_EQ(codes(fresh_call("different-domain", {foo_bar, hello_world}, {11, 1})), "OK: OVER_LIMIT OK");
}

// Both rules shadow_mode: over their limits, every code is OK.
TEST_F(ErlCompatService, Service_TestRuleShadowMode) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    const RlsResponse res = fresh_call("shadow-domain", {foo_bar, hello_world}, {11, 11});
    EXPECT_EQ(codes(res), "OK: OK OK");
    EXPECT_EQ(res.statuses(0).current_limit().requests_per_unit(), 10u);
}

// One shadow rule, one enforced, both over: the shadow one says OK, the call is OVER_LIMIT.
TEST_F(ErlCompatService, Service_TestMixedRuleShadowMode) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    EXPECT_EQ(codes(fresh_call("mixed-shadow-domain", {foo_bar, hello_world}, {11, 11})), "OVER_LIMIT: OK OVER_LIMIT");
}

// LIMIT_RESPONSE_HEADERS_ENABLED: the limit (10), what is left (0) and the seconds to the
// minute's end (58 at its mocked clock; 60 - now mod 60 here), under the names configured.
TEST_F(ErlCompatService, Service_TestServiceWithCustomRatelimitHeaders) {
    vars_["LIMIT_RESPONSE_HEADERS_ENABLED"] = "true";
    vars_["LIMIT_LIMIT_HEADER"] = "A-Ratelimit-Limit";
    vars_["LIMIT_REMAINING_HEADER"] = "A-Ratelimit-Remaining";
    vars_["LIMIT_RESET_HEADER"] = "A-Ratelimit-Reset";
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    const auto headers = headers_of_over_call();
    const std::map<std::string, std::string> expected{
        {"A-Ratelimit-Limit", "10"}, {"A-Ratelimit-Remaining", "0"}, {"A-Ratelimit-Reset", reset_now()}};
    EXPECT_EQ(headers, expected);
}

TEST_F(ErlCompatService, Service_TestServiceWithDefaultRatelimitHeaders) {
    vars_["LIMIT_RESPONSE_HEADERS_ENABLED"] = "true";
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    const auto headers = headers_of_over_call();
    const std::map<std::string, std::string> expected{
        {"RateLimit-Limit", "10"}, {"RateLimit-Remaining", "0"}, {"RateLimit-Reset", reset_now()}};
    EXPECT_EQ(headers, expected);
}

// It answers an empty domain, and an empty descriptor list, with a gRPC error ("rate limit
// domain must not be empty", "rate limit descriptor list must not be empty"); so does
// ratelimitd, INVALID_ARGUMENT naming the field (Envoy reads any error alike: failure_mode_deny
// decides). Nothing is counted.
TEST_F(ErlCompatService, Service_TestEmptyDomain) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    RlsResponse res;
    const auto status = client_->call(rls_request("", {Descriptor{hello_world, {}}}), res);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message(), "domain: empty");
    EXPECT_TRUE(redis_.keys().empty());
}

TEST_F(ErlCompatService, Service_TestEmptyDescriptors) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    RlsResponse res;
    const auto status = client_->call(rls_request("different-domain", {}), res);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message(), "descriptors: empty (a call needs at least one)");
}

// A cache (Redis) error is a gRPC error there; here UNAVAILABLE (REDIS_ERROR_ANSWER's default).
TEST_F(ErlCompatService, Service_TestCacheError) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    redis_.kill_hard();
    RlsResponse res;
    const auto status = client_->call(rls_request("different-domain", {Descriptor{foo_bar, {}}}), res);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

// A limited descriptor (9 left), one with no rule (0) and an unlimited one (UINT32_MAX, no
// limit, never counted).
TEST_F(ErlCompatService, Service_TestUnlimited) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    const RlsResponse res = fresh_call("some-domain", {foo_bar, hello_world, {{"baz", "qux"}}}, {1, 1, 1});
    EXPECT_EQ(codes(res), "OK: OK OK OK");
    EXPECT_EQ(res.statuses(0).current_limit().requests_per_unit(), 10u);
    EXPECT_EQ(res.statuses(0).limit_remaining(), 9u);
    EXPECT_FALSE(res.statuses(1).has_current_limit());
    EXPECT_EQ(res.statuses(1).limit_remaining(), 0u);
    EXPECT_FALSE(res.statuses(2).has_current_limit());
    EXPECT_EQ(res.statuses(2).limit_remaining(), std::numeric_limits<std::uint32_t>::max());
    EXPECT_FALSE(res.statuses(1).has_duration_until_reset());
    EXPECT_FALSE(res.statuses(2).has_duration_until_reset());
    EXPECT_EQ(redis_.keys().size(), 1u) << "the unlimited descriptor is not counted";
}

// Its gRPC health service is registered as "ratelimit": SERVING once started.
TEST_F(ErlCompatService, Service_TestServiceHealthStatus) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    EXPECT_EQ(client_->health("ratelimit"), Serving::SERVING);
}

// HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: NOT_SERVING until a config with a domain is loaded,
// SERVING then, NOT_SERVING again when a reload leaves no domain.
TEST_F(ErlCompatService, Service_TestServiceHealthStatusAtLeastOneConfigLoaded) {
    vars_["HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED"] = "true";
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(client_->health("ratelimit"), Serving::NOT_SERVING);
    std::ofstream(dir_ / "next.yaml") << "domain: different-domain\ndescriptors: []\n";
    fs::rename(dir_ / "next.yaml", config_dir() / "different.yaml");
    EXPECT_TRUE(wait_until([&] { return client_->health("ratelimit") == Serving::SERVING; }, process_start_bound))
        << process_.log();
    fs::remove(config_dir() / "different.yaml");
    EXPECT_TRUE(wait_until([&] { return client_->health("ratelimit") == Serving::NOT_SERVING; }, process_start_bound))
        << process_.log();
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_compat_service_test
