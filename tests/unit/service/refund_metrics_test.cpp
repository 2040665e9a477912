// ratelimitd_refunds_total and ratelimitd_refunded_units_total: one series per policy, like
// the other per-policy counters, summed over threads at scrape.
#include "ratelimitd/service/metrics.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace ratelimitd::service {
namespace {

std::string line_of(const std::string& text, const std::string& series) {
    const auto at = text.find(series + " ");
    if (at == std::string::npos) return "";
    return text.substr(at, text.find('\n', at) - at);
}

TEST(RefundMetrics, CountsRefundsAndTheirUnitsByPolicy) {
    Metrics m;
    m.count_refund("llm", 1350);
    std::thread other([&] { m.count_refund("llm", 50); });
    other.join();
    m.count_refund("api", 5);
    m.count_check("quiet", Outcome::allowed, false);
    const std::string text = m.render("0", "test");
    EXPECT_NE(text.find("# TYPE ratelimitd_refunds_total counter"), std::string::npos) << text;
    EXPECT_EQ(line_of(text, R"(ratelimitd_refunds_total{policy="llm"})"),
              R"(ratelimitd_refunds_total{policy="llm"} 2)");
    EXPECT_EQ(line_of(text, R"(ratelimitd_refunded_units_total{policy="llm"})"),
              R"(ratelimitd_refunded_units_total{policy="llm"} 1400)");
    EXPECT_EQ(line_of(text, R"(ratelimitd_refunds_total{policy="api"})"),
              R"(ratelimitd_refunds_total{policy="api"} 1)");
    // A policy that only checked shows 0 refunds, not a missing series.
    EXPECT_EQ(line_of(text, R"(ratelimitd_refunds_total{policy="quiet"})"),
              R"(ratelimitd_refunds_total{policy="quiet"} 0)");
}

}  // namespace
}  // namespace ratelimitd::service
