// The JSON summary's shape (docs/simulate.md, members in its order) and the baseline difference.
#include "ratelimitd/simulate/report.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::simulate {
namespace {

Summary summary_with(std::vector<TenantDenial> denials) {
    Summary s;
    s.lines = 12;
    s.requests = 10;
    s.unparsed = 2;
    s.policies["login"] = {10, 3, 2};
    s.denials = std::move(denials);
    s.per_minute.push_back({1'764'590'400'000, 10, {{"login", 3}}});
    return s;
}

std::vector<std::string> keys(const nlohmann::ordered_json& j) {
    std::vector<std::string> out;
    for (const auto& [k, v] : j.items()) out.push_back(k);
    return out;
}

TEST(SimulateReport, JsonHasTheContractsMembersInItsOrder) {
    Report r;
    r.config = summary_with({{"login", "ip:192.0.2.1", 2, 1'764'590'405'000}, {"login", "ip:192.0.2.2", 1, 1'764'590'410'000}});
    r.top = 1;
    const auto j = to_json(r);
    EXPECT_EQ(keys(j), (std::vector<std::string>{"lines", "requests", "unparsed", "unmatched", "denied_requests",
                                                 "policies", "top_denied", "per_minute"}));
    EXPECT_EQ(j["policies"]["login"].dump(), R"({"checked":10,"denied":3,"tenants_denied":2})");
    EXPECT_EQ(j["top_denied"].dump(),
              R"([{"policy":"login","tenant":"ip:192.0.2.1","denied":2,"first_denied":"2025-12-01T12:00:05Z"}])");
    EXPECT_EQ(j["per_minute"].dump(), R"([{"minute":"2025-12-01T12:00:00Z","requests":10,"denied_requests":0,"denied":{"login":3}}])");
}

TEST(SimulateReport, ABaselineAddsItsSummaryAndBothDifferences) {
    Report r;
    r.config = summary_with({{"login", "a", 2, 0}, {"login", "b", 1, 0}});
    r.baseline = summary_with({{"login", "b", 5, 0}, {"api", "c", 1, 0}});
    compare(r);
    const auto j = to_json(r);
    EXPECT_EQ(keys(j), (std::vector<std::string>{"lines", "requests", "unparsed", "unmatched", "denied_requests",
                                                 "policies", "top_denied", "per_minute", "baseline", "newly_denied",
                                                 "no_longer_denied", "difference"}));
    Report alone;
    alone.config = r.config;
    EXPECT_EQ(keys(j["baseline"]), keys(to_json(alone)));
    EXPECT_EQ(j["newly_denied"].dump(), R"([{"policy":"login","tenant":"a"}])");
    EXPECT_EQ(j["no_longer_denied"].dump(), R"([{"policy":"api","tenant":"c"}])");
}

TEST(SimulateReport, HtmlEscapesWhatTheLogControls) {
    Report r;
    r.config = summary_with({{"login", "<img src=x onerror=alert(1)>", 2, 0}});
    r.log_name = "a\"<b>.log";
    const std::string html = to_html(r);
    EXPECT_EQ(html.find("<img"), std::string::npos);
    EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_NE(html.find("<polyline"), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::simulate
