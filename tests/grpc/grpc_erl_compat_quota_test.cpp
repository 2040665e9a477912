// envoyproxy/ratelimit's quota mode service tests (test/service/ratelimit_test.go) on the wire:
// a quota_mode descriptor over its limit denies the call only when every quota descriptor of
// the call is over; a regular one over denies on its own; QUOTA_MODE=true puts every
// descriptor in quota mode; SHADOW_MODE=true lets every call through. Each descriptor says its
// own code. Test names: ErlCompat.Service_<its Go test name>.
#include "grpc/erl_compat_service_fixture.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::test::grpc_erl_compat_quota_test {
namespace {

using ErlCompatQuota = ErlCompatServiceTest;

// regular=limit 5/min, quota=limit and quota2=limit 3/min in quota_mode (erl_compat_service_fixture.hpp).

TEST_F(ErlCompatQuota, Service_TestServiceGlobalQuotaMode) {
    vars_["QUOTA_MODE"] = "true";
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    EXPECT_EQ(codes(fresh_call("quota-domain", {regular, quota}, {6, 4})), "OVER_LIMIT: OVER_LIMIT OVER_LIMIT");
    EXPECT_EQ(codes(fresh_call("quota-domain", {regular, quota}, {6, 1})), "OK: OVER_LIMIT OK")
        << "QUOTA_MODE: the regular rule is a quota too";
}

TEST_F(ErlCompatQuota, Service_TestServicePerDescriptorQuotaMode) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    EXPECT_EQ(codes(fresh_call("quota-domain", {regular, quota}, {6, 1})), "OVER_LIMIT: OVER_LIMIT OK");
}

TEST_F(ErlCompatQuota, Service_TestServiceMixedPerDescriptorModes) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    EXPECT_EQ(codes(fresh_call("quota-domain", {regular, quota}, {1, 4})), "OVER_LIMIT: OK OVER_LIMIT");
}

TEST_F(ErlCompatQuota, Service_TestServiceMixedPerDescriptorModesUnderLimit) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    const RlsResponse res = fresh_call("quota-domain", {regular, quota}, {1, 1});
    EXPECT_EQ(codes(res), "OK: OK OK");
    EXPECT_EQ(res.statuses(0).limit_remaining(), 4u);
    EXPECT_EQ(res.statuses(1).limit_remaining(), 2u);
}

TEST_F(ErlCompatQuota, Service_TestServiceQuotaModeOnlyAllOverTheLimit) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    EXPECT_EQ(codes(fresh_call("quota-domain", {quota, quota2}, {4, 4})), "OVER_LIMIT: OVER_LIMIT OVER_LIMIT");
}

TEST_F(ErlCompatQuota, Service_TestServiceQuotaModeOnlySomeOverTheLimit) {
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    EXPECT_EQ(codes(fresh_call("quota-domain", {quota, quota2}, {4, 1})), "OK: OVER_LIMIT OK");
}

TEST_F(ErlCompatQuota, Service_TestServiceQuotaModeWithShadowMode) {
    vars_["SHADOW_MODE"] = "true";
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    EXPECT_EQ(codes(fresh_call("quota-domain", {quota, quota2}, {4, 4})), "OK: OVER_LIMIT OVER_LIMIT");
}

TEST_F(ErlCompatQuota, Service_TestServiceMixedModeWithShadowMode) {
    vars_["SHADOW_MODE"] = "true";
    ASSERT_NO_FATAL_FAILURE(serve_domains());
    EXPECT_EQ(codes(fresh_call("quota-domain", {regular, quota}, {6, 4})), "OK: OVER_LIMIT OVER_LIMIT");
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_compat_quota_test
