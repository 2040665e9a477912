// build_response under envoyproxy/ratelimit's quota_mode (its service/ratelimit_test.go:
// TestServiceGlobalQuotaMode, TestServicePerDescriptorQuotaMode, TestServiceMixedPerDescriptorModes*)
// and its response headers (LIMIT_RESPONSE_HEADERS_ENABLED; none by default).
#include "ratelimitd/grpc/response_builder.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace ratelimitd::rls {
namespace {

using Response = envoy::service::ratelimit::v3::RateLimitResponse;
using Kind = policy::RlsDescriptorPlan::Kind;

constexpr std::int64_t mid_minute_s = 1'764'000'010;  // 10 s into a minute (1'764'000'000 is one's start)

check::WindowState window(bool allowed, std::int64_t remaining) {
    check::WindowState w;
    w.allowed = allowed;
    w.limit = 5;
    w.window_s = 60;
    w.remaining = remaining;
    w.reset_after_ms = 50'000;
    return w;
}

// Two descriptors on two limits, "regular" (5/minute) and "quota" (3/minute), each quota or not.
struct TwoLimits {
    policy::Policy first;
    policy::Policy second;
    policy::RlsPlan plan;

    TwoLimits(bool first_quota, bool second_quota) {
        plan.check.limits.resize(2);
        plan.check.limits[0].policy = &first;
        plan.check.limits[0].quota = first_quota;
        plan.check.limits[1].policy = &second;
        plan.check.limits[1].quota = second_quota;
        for (std::size_t i = 0; i < 2; ++i) {
            policy::RlsDescriptorPlan d;
            d.kind = Kind::limited;
            d.limit = i;
            d.requests_per_unit = i == 0 ? 5 : 3;
            d.unit = policy::RlsUnit::minute;
            d.window_end_s = 1'764'000'060;
            plan.descriptors.push_back(d);
        }
    }
};

// What CheckService decides: only non-quota (enforced) windows deny the verdict.
service::Decision decided(const TwoLimits& t, bool first_allowed, std::int64_t first_left, bool second_allowed,
                          std::int64_t second_left) {
    service::Decision d;
    d.verdict.windows = {window(first_allowed, first_left), window(second_allowed, second_left)};
    d.owner = {0, 1};
    d.verdict.allowed = (first_allowed || t.plan.check.limits[0].quota) && (second_allowed || t.plan.check.limits[1].quota);
    return d;
}

Response answer(const TwoLimits& t, const service::Decision& d, const ResponseHeaders& headers = HeaderSet::ietf) {
    Response r;
    build_response(d, t.plan, mid_minute_s, r, headers);
    return r;
}

TEST(QuotaMode, EveryQuotaDescriptorOverMakesTheCallOver) {
    const TwoLimits t(true, true);  // QUOTA_MODE=true: both are quota
    const Response r = answer(t, decided(t, false, 0, false, 0));
    EXPECT_EQ(r.overall_code(), Response::OVER_LIMIT);
    EXPECT_EQ(r.statuses(0).code(), Response::OVER_LIMIT);
    EXPECT_EQ(r.statuses(1).code(), Response::OVER_LIMIT);
}

TEST(QuotaMode, OneQuotaDescriptorUnderItsLimitLetsTheCallThrough) {
    const TwoLimits t(true, true);
    const Response r = answer(t, decided(t, false, 0, true, 2));
    EXPECT_EQ(r.overall_code(), Response::OK);
    EXPECT_EQ(r.statuses(0).code(), Response::OVER_LIMIT) << "the descriptor still says it is over";
    EXPECT_EQ(r.statuses(1).code(), Response::OK);
}

TEST(QuotaMode, ARegularLimitOverDeniesWhateverTheQuotaOnesSay) {
    const TwoLimits t(false, true);
    const Response r = answer(t, decided(t, false, 0, true, 0));
    EXPECT_EQ(r.overall_code(), Response::OVER_LIMIT);
    EXPECT_EQ(r.statuses(0).code(), Response::OVER_LIMIT);
    EXPECT_EQ(r.statuses(1).code(), Response::OK);
}

TEST(QuotaMode, TheOnlyQuotaDescriptorOverMakesTheCallOver) {
    const TwoLimits t(false, true);
    const Response r = answer(t, decided(t, true, 0, false, 0));
    EXPECT_EQ(r.overall_code(), Response::OVER_LIMIT);
    EXPECT_EQ(r.statuses(0).code(), Response::OK);
    EXPECT_EQ(r.statuses(1).code(), Response::OVER_LIMIT);
}

TEST(QuotaMode, EverythingUnderItsLimitIsOk) {
    const TwoLimits t(false, true);
    EXPECT_EQ(answer(t, decided(t, true, 3, true, 1)).overall_code(), Response::OK);
}

TEST(QuotaMode, AShadowQuotaDescriptorNeverCountsAsOver) {
    TwoLimits t(true, true);
    t.second.shadow = true;  // shadow_mode and quota_mode: its answer is OK, so not every quota is over
    const Response r = answer(t, decided(t, false, 0, false, 0));
    EXPECT_EQ(r.statuses(1).code(), Response::OK);
    EXPECT_EQ(r.overall_code(), Response::OK);
}

std::map<std::string, std::string> headers_of(const Response& r) {
    std::map<std::string, std::string> out;
    for (const auto& h : r.response_headers_to_add()) out[h.key()] = h.value();
    return out;
}

TEST(ErlHeaders, NoneAddsNothing) {
    const TwoLimits t(false, false);
    EXPECT_EQ(answer(t, decided(t, true, 4, true, 2), HeaderSet::none).response_headers_to_add_size(), 0);
    EXPECT_EQ(answer(t, decided(t, false, 0, true, 2), HeaderSet::none).response_headers_to_add_size(), 0);
}

TEST(ErlHeaders, TheDescriptorWithTheLeastRemainingByItsDefaultNames) {
    const TwoLimits t(false, false);
    const auto h = headers_of(answer(t, decided(t, true, 4, true, 2), HeaderSet::erl));
    const std::map<std::string, std::string> expected{
        {"RateLimit-Limit", "3"}, {"RateLimit-Remaining", "2"}, {"RateLimit-Reset", "50"}};
    EXPECT_EQ(h, expected);
}

TEST(ErlHeaders, AnEnforcedDenialIsReportedEvenPastALowerRemaining) {
    const TwoLimits t(false, false);
    // The second is over (remaining 0); the first is over too and comes first: the last denial wins.
    const auto h = headers_of(answer(t, decided(t, false, 0, false, 0), HeaderSet::erl));
    EXPECT_EQ(h.at("RateLimit-Limit"), "3");
    const auto first_only = headers_of(answer(t, decided(t, false, 0, true, 0), HeaderSet::erl));
    EXPECT_EQ(first_only.at("RateLimit-Limit"), "5") << "an enforced denial takes the place of a remaining of 0";
    EXPECT_EQ(first_only.at("RateLimit-Remaining"), "0");
}

TEST(ErlHeaders, NamesAreTheOnesConfigured) {
    const TwoLimits t(false, false);
    const ResponseHeaders named{HeaderSet::erl, {"X-Limit", "X-Remaining", "X-Reset"}};
    const auto h = headers_of(answer(t, decided(t, true, 4, true, 2), named));
    EXPECT_EQ(h.size(), 3u);
    EXPECT_EQ(h.at("X-Limit"), "3");
    EXPECT_EQ(h.at("X-Remaining"), "2");
    EXPECT_EQ(h.at("X-Reset"), "50");
}

TEST(ErlHeaders, NothingWhenNoDescriptorHasALimit) {
    TwoLimits t(false, false);
    t.plan.descriptors[0].kind = Kind::unlimited;
    t.plan.descriptors[1].kind = Kind::no_match;
    service::Decision d;
    d.verdict.allowed = true;
    EXPECT_EQ(answer(t, d, HeaderSet::erl).response_headers_to_add_size(), 0);
}

}  // namespace
}  // namespace ratelimitd::rls
