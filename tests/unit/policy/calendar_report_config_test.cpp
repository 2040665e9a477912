// `align: calendar` / `utc_offset:` in the registry, calendar keys, and plan_report's rules.
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/report_plan.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace {

using ratelimitd::test::parse_error_of;

using namespace ratelimitd::policy;

TEST(CalendarConfig, AlignCalendarReadsTheUnitAndOffset) {
    const Config c = parse_config(R"(
policies:
  monthly: {algorithm: fixed_window, limit: 10000, window: 1mo, align: calendar, utc_offset: "+02:00", long_ttl: true}
  tiered:
    algorithm: fixed_window
    windows:
      - {limit: 100, window: 1m}
      - {limit: 5000, window: 1d, align: calendar, utc_offset: "-05:30"}
)",
                                  "cal.yaml");
    const Policy& m = *c.registry.find("monthly");
    ASSERT_TRUE(m.calendar.has_value());
    EXPECT_EQ(*m.calendar, ratelimitd::CalendarUnit::month);
    EXPECT_EQ(m.utc_offset_minutes, 120);
    EXPECT_EQ(m.window, std::chrono::hours(24 * 30));
    const Policy& t = *c.registry.find("tiered");
    EXPECT_FALSE(t.windows[0].calendar.has_value());
    ASSERT_TRUE(t.windows[1].calendar.has_value());
    EXPECT_EQ(*t.windows[1].calendar, ratelimitd::CalendarUnit::day);
    EXPECT_EQ(t.windows[1].utc_offset_minutes, -330);
}

TEST(CalendarConfig, RefusalsNameTheFileAndTheField) {
    const std::string base = "policies:\n  m: {algorithm: fixed_window, limit: 5, ";
    const std::string zone = parse_error_of(base + "window: 1m, align: calendar, utc_offset: Europe/Berlin}\n", "cal.yaml");
    EXPECT_NE(zone.find("cal.yaml"), std::string::npos) << zone;
    EXPECT_NE(zone.find("policies.m.utc_offset"), std::string::npos) << zone;
    EXPECT_NE(zone.find("time zone names are not supported"), std::string::npos) << zone;
    EXPECT_NE(parse_error_of(base + "window: 2m, align: calendar}\n", "cal.yaml").find("policies.m.window: expected one of 1m, 1h"),
              std::string::npos);
    EXPECT_NE(parse_error_of(base + "window: 1m, utc_offset: \"+01:00\"}\n", "cal.yaml").find("only allowed with align: calendar"),
              std::string::npos);
    EXPECT_NE(parse_error_of("policies:\n  m: {algorithm: gcra, limit: 5, window: 1m, align: calendar}\n", "cal.yaml")
                  .find("policies.m.align: align: calendar is only for algorithm fixed_window"),
              std::string::npos);
    EXPECT_NE(parse_error_of(base + "window: 1mo, align: calendar}\n", "cal.yaml").find("long_ttl"), std::string::npos)
        << "a month outlives a day: long_ttl: true, as for any window over 1d";
}

TEST(CalendarKey, CarriesThePeriodInTheTenantsSlot) {
    const std::string k = make_calendar_key("rl", "monthly", "acme", "{x}", "1mo");
    EXPECT_EQ(k, "rl:monthly:{acme:%7Bx%7D}:1mo@");
    EXPECT_EQ(calendar_period_key(k, 1796083200000), "rl:monthly:{acme:%7Bx%7D}:1mo@1796083200");
}

class ReportPlan : public ::testing::Test {
protected:
    std::shared_ptr<const Registry> registry = std::make_shared<const Registry>(parse_config(R"(
policies:
  llm: {algorithm: token_bucket, limit: 100, window: 1m, burst: 100}
  log: {algorithm: sliding_log, limit: 5, window: 1m}
routes:
  - {path: /both, limits: [{policy: llm}, {policy: log}]}
)",
                                                                                           "r.yaml")
                                                                                  .registry);
    ReportRequest request(std::string policy, std::int64_t cost) {
        ReportRequest r;
        r.check.policy = std::move(policy);
        r.check.tenant = "acme";
        r.cost = cost;
        return r;
    }
};

TEST_F(ReportPlan, IsACheckPlanInReportModeWithTheSignedCost) {
    auto plan = plan_report(registry, request("llm", -40));
    ASSERT_TRUE(plan.has_value()) << plan.error().detail;
    EXPECT_EQ(plan->mode, Mode::report);
    EXPECT_EQ(plan->report_cost, -40);
    ASSERT_EQ(plan->limits.size(), 1u);
    EXPECT_EQ(plan->limits[0].windows[0].key, "rl:llm:acme:global");
    // A report may charge beyond the burst: that is a debt, not a bad cost.
    EXPECT_TRUE(plan_report(registry, request("llm", 5000)).has_value());
}

TEST_F(ReportPlan, RefusesWhatTheSlidingLogCannotDoAndCostsOutOfRange) {
    auto refund = plan_report(registry, request("log", -1));
    ASSERT_FALSE(refund.has_value());
    EXPECT_EQ(refund.error().code, ratelimitd::errc::invalid_cost);
    EXPECT_NE(refund.error().detail.find("sliding_log"), std::string::npos) << refund.error().detail;
    // Beyond the limit is a debt (one weighted entry, bounded by max_debt), not a bad cost.
    EXPECT_TRUE(plan_report(registry, request("log", 6)).has_value());
    EXPECT_FALSE(plan_report(registry, request("llm", 1'000'001)).has_value());
    EXPECT_FALSE(plan_report(registry, request("llm", -1'000'001)).has_value());
    // A layered route: a refund is refused when any of its limits is a sliding log.
    ReportRequest layered;
    layered.check.tenant = "acme";
    layered.check.path = "/both";
    layered.cost = -1;
    EXPECT_FALSE(plan_report(registry, layered).has_value());
    layered.cost = 2;
    auto both = plan_report(registry, layered);
    ASSERT_TRUE(both.has_value());
    EXPECT_EQ(both->limits.size(), 2u) << "a report charges every limit of the route";
}

}  // namespace
