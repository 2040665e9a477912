// CheckService::decide in report mode: one road with checks, but always through apply_all
// (where the stores read the mode), and not counted as a check; refunds and unmatched auth
// subrequests are counted where checks are.
#include "ratelimitd/service/check_service.hpp"

#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/report_plan.hpp"
#include "support/metrics_text.hpp"
#include "support/run_on_io.hpp"
#include "support/scripted_store.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace ratelimitd::service {
namespace {

TEST(ReportService, AReportOfOneWindowGoesThroughApplyAllAndIsNoCheck) {
    policy::RegistryHandle registry(std::make_shared<const policy::Registry>(
        policy::parse_config("policies:\n  llm: {algorithm: token_bucket, limit: 100, window: 1m}\n", "r.yaml")
            .registry));
    test::ScriptedStore store;
    Metrics metrics;
    CheckService service(registry, store, metrics);

    policy::ReportRequest req;
    req.check.policy = "llm";
    req.check.tenant = "acme";
    req.cost = 250;  // beyond the burst: a debt, not an error
    auto plan = policy::plan_report(registry.current(), req);
    ASSERT_TRUE(plan.has_value()) << plan.error().detail;
    const Decision d = test::run_on_io(service.decide(std::move(*plan)));
    EXPECT_TRUE(d.report);
    EXPECT_TRUE(d.verdict.allowed);
    ASSERT_EQ(store.calls().size(), 1u);
    EXPECT_EQ(store.calls()[0].kind, "apply_all") << "a single window's report still carries its mode";
    const std::string text = metrics.render("0", "scripted");
    EXPECT_EQ(text.find("ratelimitd_checks_total{policy=\"llm\""), std::string::npos) << "a report is no check";
}

// A refund the store took is counted by the service, per limit, in units; a charge is no
// refund, and a refund the store did not take (degraded) counts nothing.
TEST(ReportService, ARefundIsCountedPerLimitOnlyWhenTheStoreTookIt) {
    policy::RegistryHandle registry(std::make_shared<const policy::Registry>(
        policy::parse_config("policies:\n  llm: {algorithm: token_bucket, limit: 100, window: 1m}\n", "r.yaml")
            .registry));
    test::ScriptedStore store;
    Metrics metrics;
    CheckService service(registry, store, metrics);
    const auto report = [&](std::int64_t cost) {
        policy::ReportRequest req;
        req.check.policy = "llm";
        req.check.tenant = "acme";
        req.cost = cost;
        auto plan = policy::plan_report(registry.current(), req);
        EXPECT_TRUE(plan.has_value());
        return test::run_on_io(service.decide(std::move(*plan)));
    };
    report(-40);
    report(25);
    store.push(errc::store_unavailable);
    EXPECT_TRUE(report(-5).degraded);
    const std::string text = metrics.render("0", "scripted");
    EXPECT_EQ(test::sample(text, "ratelimitd_refunds_total{policy=\"llm\"}"), 1) << text;
    EXPECT_EQ(test::sample(text, "ratelimitd_refunded_units_total{policy=\"llm\"}"), 40) << text;
}

TEST(ReportService, AnUnmatchedAuthSubrequestIsCountedWhenDecided) {
    policy::RegistryHandle registry(std::make_shared<const policy::Registry>(
        policy::parse_config("policies:\n  llm: {algorithm: token_bucket, limit: 100, window: 1m}\n", "r.yaml")
            .registry));
    test::ScriptedStore store;
    Metrics metrics;
    CheckService service(registry, store, metrics);
    policy::CheckPlan unmatched;
    unmatched.unmatched = true;
    const Decision d = test::run_on_io(service.decide(std::move(unmatched)));
    EXPECT_FALSE(d.limited);
    EXPECT_TRUE(store.calls().empty());
    EXPECT_EQ(test::sample(metrics.render("0", "scripted"), "ratelimitd_auth_unmatched_total"), 1);
}

}  // namespace
}  // namespace ratelimitd::service
