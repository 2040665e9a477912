// build_response: overall code, each descriptor's status from its own limit's windows,
// shadow, unlimited / no match, degraded decisions and the IETF headers.
#include "ratelimitd/grpc/response_builder.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace ratelimitd::rls {
namespace {

using Response = envoy::service::ratelimit::v3::RateLimitResponse;
using Kind = policy::RlsDescriptorPlan::Kind;

constexpr std::int64_t minute_start_s = 1'764'000'000;

check::WindowState window(const std::string& name, bool allowed, std::int64_t remaining) {
    check::WindowState w;
    w.policy = name;
    w.allowed = allowed;
    w.limit = 10;
    w.window_s = 60;
    w.remaining = remaining;
    w.reset_after_s = 30;
    w.reset_after_ms = 29'500;
    w.retry_after_s = allowed ? 0 : 12;
    return w;
}

policy::RlsDescriptorPlan limited(std::size_t limit, const std::string& name, std::uint32_t per_unit,
                                  policy::RlsUnit unit) {
    policy::RlsDescriptorPlan d;
    d.kind = Kind::limited;
    d.limit = limit;
    d.name = name;
    d.requests_per_unit = per_unit;
    d.unit = unit;
    return d;
}

struct Fixture {
    policy::Policy enforced;
    policy::Policy shadowed;
    policy::RlsPlan plan;

    Fixture() {
        enforced.name = "per-ip";
        shadowed.name = "per-path";
        shadowed.shadow = true;
        plan.check.limits.resize(2);
        plan.check.limits[0].policy = &enforced;
        plan.check.limits[1].policy = &shadowed;
        plan.descriptors.push_back(limited(0, "ip", 10, policy::RlsUnit::minute));
        plan.descriptors.push_back(limited(1, "", 5, policy::RlsUnit::second));
        plan.descriptors.push_back({});
        plan.descriptors.back().kind = Kind::unlimited;
        plan.descriptors.push_back({});  // no_match
    }
};

service::Decision decision(bool allowed, check::WindowStates windows, service::Owners owner) {
    service::Decision d;
    d.verdict.allowed = allowed;
    d.verdict.windows = std::move(windows);
    d.owner = std::move(owner);
    return d;
}

TEST(ResponseBuilder, AdmittedCallReportsEachLimitsOwnNumbers) {
    Fixture f;
    Response r;
    build_response(decision(true, {window("per-ip", true, 7), window("per-path", true, 2)}, {0, 1}), f.plan, minute_start_s, r);
    EXPECT_EQ(r.overall_code(), Response::OK);
    ASSERT_EQ(r.statuses_size(), 4);
    EXPECT_EQ(r.statuses(0).code(), Response::OK);
    EXPECT_EQ(r.statuses(0).limit_remaining(), 7u);
    EXPECT_EQ(r.statuses(0).current_limit().name(), "ip");
    EXPECT_EQ(r.statuses(0).current_limit().requests_per_unit(), 10u);
    EXPECT_EQ(r.statuses(0).current_limit().unit(), Response::RateLimit::MINUTE);
    EXPECT_EQ(r.statuses(0).duration_until_reset().seconds(), 29);
    EXPECT_EQ(r.statuses(0).duration_until_reset().nanos(), 500'000'000);
    EXPECT_EQ(r.statuses(1).limit_remaining(), 2u);
    EXPECT_EQ(r.statuses(1).current_limit().unit(), Response::RateLimit::SECOND);
}

TEST(ResponseBuilder, UnlimitedAndNoMatchAnswerOkWithoutALimit) {
    Fixture f;
    Response r;
    build_response(decision(true, {window("per-ip", true, 7), window("per-path", true, 2)}, {0, 1}), f.plan, minute_start_s, r);
    EXPECT_EQ(r.statuses(2).code(), Response::OK);
    EXPECT_FALSE(r.statuses(2).has_current_limit());
    EXPECT_EQ(r.statuses(3).code(), Response::OK);
    EXPECT_FALSE(r.statuses(3).has_current_limit());
    // As envoyproxy/ratelimit answers: unlimited has UINT32_MAX left, no match has 0.
    EXPECT_EQ(r.statuses(2).limit_remaining(), 4'294'967'295u);
    EXPECT_EQ(r.statuses(3).limit_remaining(), 0u);
}

TEST(ResponseBuilder, UnlimitedReportsUint32MaxBehindAnyDenial) {
    Fixture f;
    f.plan.descriptors[0].never_admitted = true;
    Response never;
    build_never_admitted_response(f.plan, minute_start_s, never);
    EXPECT_EQ(never.statuses(2).code(), Response::OK);
    EXPECT_EQ(never.statuses(2).limit_remaining(), 4'294'967'295u);
    Response denied;
    build_response(decision(false, {window("per-ip", false, 0)}, {0}), f.plan, minute_start_s, denied);
    EXPECT_EQ(denied.statuses(2).limit_remaining(), 4'294'967'295u);
}

TEST(ResponseBuilder, EnforcedDenialIsOverLimitWithRetryAsResetTime) {
    Fixture f;
    Response r;
    // A denial stops before the shadow limit: its window is missing.
    build_response(decision(false, {window("per-ip", false, 0)}, {0}), f.plan, minute_start_s, r);
    EXPECT_EQ(r.overall_code(), Response::OVER_LIMIT);
    EXPECT_EQ(r.statuses(0).code(), Response::OVER_LIMIT);
    EXPECT_EQ(r.statuses(0).limit_remaining(), 0u);
    EXPECT_EQ(r.statuses(0).duration_until_reset().seconds(), 12);
    EXPECT_EQ(r.statuses(1).code(), Response::OK);
    EXPECT_TRUE(r.statuses(1).has_current_limit());
    EXPECT_FALSE(r.statuses(1).has_duration_until_reset());
}

TEST(ResponseBuilder, GlobalShadowModeLetsTheCallThroughAndTheDescriptorStillSaysOverLimit) {
    // envoy_shadow_mode (envoyproxy/ratelimit's SHADOW_MODE): only the overall code changes.
    Fixture f;
    f.plan.shadow_all = true;
    Response r;
    build_response(decision(false, {window("per-ip", false, 0)}, {0}), f.plan, minute_start_s, r);
    EXPECT_EQ(r.overall_code(), Response::OK);
    EXPECT_EQ(r.statuses(0).code(), Response::OVER_LIMIT);
    EXPECT_EQ(r.statuses(0).limit_remaining(), 0u);

    f.plan.descriptors[0].never_admitted = true;
    Response never;
    build_never_admitted_response(f.plan, minute_start_s, never);
    EXPECT_EQ(never.overall_code(), Response::OK);
    EXPECT_EQ(never.statuses(0).code(), Response::OVER_LIMIT);
}

TEST(ResponseBuilder, ShadowDenialAnswersOk) {
    Fixture f;
    Response r;
    auto d = decision(true, {window("per-ip", true, 3), window("per-path", false, 0)}, {0, 1});
    d.shadow_denied = true;
    build_response(d, f.plan, minute_start_s, r);
    EXPECT_EQ(r.overall_code(), Response::OK);
    EXPECT_EQ(r.statuses(1).code(), Response::OK);
    EXPECT_EQ(r.statuses(1).limit_remaining(), 0u);
}

TEST(ResponseBuilder, DegradedDecisionAnswersByTheFailureMode) {
    Fixture f;
    for (const bool allowed : {true, false}) {
        auto d = decision(allowed, {}, {});
        d.degraded = true;
        Response r;
        build_response(d, f.plan, minute_start_s, r);
        EXPECT_EQ(r.overall_code(), allowed ? Response::OK : Response::OVER_LIMIT);
        EXPECT_EQ(r.statuses(0).code(), allowed ? Response::OK : Response::OVER_LIMIT);
        EXPECT_EQ(r.statuses(1).code(), Response::OK);  // shadow never denies
        EXPECT_EQ(r.response_headers_to_add_size(), 0);  // no numbers are known
    }
}

TEST(ResponseBuilder, CarriesTheIetfFieldsOfEveryWindow) {
    Fixture f;
    Response r;
    build_response(decision(true, {window("per-ip", true, 7), window("per-path", true, 2)}, {0, 1}), f.plan, minute_start_s, r);
    ASSERT_EQ(r.response_headers_to_add_size(), 2);
    EXPECT_EQ(r.response_headers_to_add(0).key(), "RateLimit-Policy");
    EXPECT_EQ(r.response_headers_to_add(0).value(), "\"per-ip\";q=10;w=60, \"per-path\";q=10;w=60");
    EXPECT_EQ(r.response_headers_to_add(1).key(), "RateLimit");
    EXPECT_EQ(r.response_headers_to_add(1).value(), "\"per-ip\";r=7;t=30, \"per-path\";r=2;t=30");
}

TEST(ResponseBuilder, CarriesTheXRateLimitFieldsOnlyWhenAsked) {
    Fixture f;
    auto allowed = decision(true, {window("per-ip", true, 7), window("per-path", true, 2)}, {0, 1});
    allowed.verdict.windows[1].reset_epoch_s = minute_start_s + 30;
    Response r;
    build_response(allowed, f.plan, minute_start_s, r, HeaderSet::ietf_and_x);
    std::map<std::string, std::string> headers;
    for (const auto& h : r.response_headers_to_add()) headers[h.key()] = h.value();
    // The values of an HTTP answer: the window with the least remaining.
    EXPECT_EQ(headers["X-RateLimit-Limit"], "10");
    EXPECT_EQ(headers["X-RateLimit-Remaining"], "2");
    EXPECT_EQ(headers["X-RateLimit-Reset"], std::to_string(minute_start_s + 30));
    EXPECT_EQ(headers.count("Retry-After"), 0u);
    EXPECT_EQ(r.response_headers_to_add_size(), 5);

    Response denied;
    build_response(decision(false, {window("per-ip", false, 0)}, {0}), f.plan, minute_start_s, denied,
                   HeaderSet::ietf_and_x);
    headers.clear();
    for (const auto& h : denied.response_headers_to_add()) headers[h.key()] = h.value();
    EXPECT_EQ(headers["X-RateLimit-Remaining"], "0");
    EXPECT_EQ(headers["Retry-After"], "12");
}

TEST(ResponseBuilder, AlignedWindowResetsAtItsEndForEveryone) {
    Fixture f;
    f.plan.descriptors[0].window_end_s = minute_start_s + 42;
    Response r;
    build_response(decision(false, {window("per-ip", false, 0)}, {0}), f.plan, minute_start_s, r);
    EXPECT_EQ(r.statuses(0).duration_until_reset().seconds(), 42);
    EXPECT_EQ(r.statuses(0).duration_until_reset().nanos(), 0);
}

TEST(ResponseBuilder, SharedLimitReportsItsLeastRemainingWindow) {
    Fixture f;
    f.plan.descriptors[1].limit = 0;  // two descriptors on one deduplicated limit
    Response r;
    build_response(decision(true, {window("per-ip-1m", true, 7), window("per-ip-1h", true, 4)}, {0, 0}), f.plan, minute_start_s, r);
    EXPECT_EQ(r.statuses(0).limit_remaining(), 4u);
    EXPECT_EQ(r.statuses(1).limit_remaining(), 4u);
}

}  // namespace
}  // namespace ratelimitd::rls
