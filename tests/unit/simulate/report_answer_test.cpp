// simulate's reports answer first (issue 54): every request counted once (a "not limited"
// row), the denied share, and with a baseline the per-policy difference ahead of the rest.
#include "ratelimitd/simulate/report.hpp"
#include "ratelimitd/simulate/tally.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::simulate {
namespace {

constexpr std::int64_t answer_noon = 1'796'126'400'000;  // 2026-12-01T12:00:00Z

// Two minutes: 4 requests to login (limit 2 a minute: 2 denied) and 2 no policy checks in the
// first, 1 login request in the second.
Summary config_run() {
    Tally t({"api", "login"});
    for (int i = 0; i < 4; ++i) {
        t.request(answer_noon + i * 1000);
        t.checked(1, "ip:192.0.2.1", i >= 2, answer_noon + i * 1000);
        t.decided(true, i >= 2);
    }
    for (int i = 0; i < 2; ++i) {
        t.request(answer_noon + 10'000);
        t.decided(false, false);
    }
    t.request(answer_noon + 60'000);
    t.checked(1, "ip:192.0.2.1", false, answer_noon + 60'000);
    t.decided(true, false);
    Summary s = t.summary();
    s.lines = 7;
    return s;
}

// The same lines under a baseline whose api policy denied 5 of another tenant.
Summary baseline_run() {
    Summary s = config_run();
    s.policies["login"].denied = 0;
    s.policies["api"] = {5, 5, 1};
    s.denials = {{"api", "ip:192.0.2.9", 5, answer_noon}};
    s.denied_requests = 5;
    for (auto& m : s.per_minute) m.denied.clear();
    s.per_minute[0].denied["api"] = 5;
    return s;
}

Report compared() {
    Report r;
    r.config = config_run();
    r.baseline = baseline_run();
    r.config_name = "new.yaml";
    r.baseline_name = "current.yaml";
    compare(r);
    return r;
}

TEST(SimulateAnswer, EveryRequestIsCountedOnceWithTheUnlimitedOnes) {
    const Summary s = config_run();
    EXPECT_EQ(s.requests, 7u);
    EXPECT_EQ(s.unmatched, 2u);
    EXPECT_EQ(s.denied_requests, 2u);
    std::uint64_t checked = 0;
    for (const auto& [name, t] : s.policies) checked += t.checked;
    EXPECT_EQ(checked + s.unmatched, s.requests);
    ASSERT_EQ(s.per_minute.size(), 2u);
    EXPECT_EQ(s.per_minute[0].requests, 6u);
    EXPECT_EQ(s.per_minute[0].denied_requests, 2u);
    EXPECT_EQ(s.per_minute[1].denied_requests, 0u);
}

TEST(SimulateAnswer, TheDifferenceIsPerPolicyDeniedBeforeAndAfter) {
    const Report r = compared();
    ASSERT_EQ(r.difference.size(), 2u);
    EXPECT_EQ(r.difference[0].policy, "api");
    EXPECT_EQ(r.difference[0].denied_before, 5u);
    EXPECT_EQ(r.difference[0].denied_after, 0u);
    EXPECT_EQ(r.difference[0].no_longer_denied, 1u);
    EXPECT_EQ(r.difference[1].policy, "login");
    EXPECT_EQ(r.difference[1].denied_before, 0u);
    EXPECT_EQ(r.difference[1].denied_after, 2u);
    EXPECT_EQ(r.difference[1].newly_denied, 1u);
    const auto j = to_json(r);
    EXPECT_EQ(j["unmatched"], 2);
    EXPECT_EQ(j["denied_requests"], 2);
    EXPECT_EQ(j["difference"].dump(),
              R"({"api":{"denied_before":5,"denied_after":0,"newly_denied":0,"no_longer_denied":1},)"
              R"("login":{"denied_before":0,"denied_after":2,"newly_denied":1,"no_longer_denied":0}})");
}

TEST(SimulateAnswer, TheTextLeadsWithTheDifferenceAndCountsTheUnlimited) {
    const std::string text = to_text(compared());
    const auto difference = text.find("difference from the baseline current.yaml: requests denied 5 -> 2 of 7");
    ASSERT_NE(difference, std::string::npos) << text;
    EXPECT_LT(difference, text.find("7 lines, 7 requests (2 denied, 28.57%)")) << text;
    EXPECT_NE(text.find("login                                 0             2       +2              1                 0\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("(not limited)                       2            -         -               -"),
              std::string::npos)
        << text;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST(SimulateAnswer, TheHtmlPutsTheDifferenceFirstThenBothConfigsOnOneChart) {
    const std::string html = to_html(compared());
    const auto difference = html.find("<table id=\"difference\">");
    const auto volume = html.find("<svg id=\"volume\"");
    const auto chart = html.find("<svg id=\"chart\"");
    const auto tables = html.find("<table id=\"config-policies\">");
    ASSERT_NE(difference, std::string::npos);
    EXPECT_LT(difference, volume);
    EXPECT_LT(volume, chart);
    EXPECT_LT(chart, tables);
    EXPECT_EQ(count(html, "<svg"), 2u);  // one volume chart, one denials chart for both configs
    EXPECT_NE(html.find("<tr><td>login</td><td class=\"n\">0</td><td class=\"n\">2</td><td class=\"n up\">+2</td>"),
              std::string::npos);
    // Both configs' lines on the one chart: the baseline's api peak (5) is its top, y = 14; the
    // config's login peak (2) sits at 2/5 of the same scale, not at the top of its own.
    const std::string svg = html.substr(chart, html.find("</svg>", chart) - chart);
    EXPECT_NE(svg.find("data-policy=\"api\" data-config=\"baseline\""), std::string::npos) << svg;
    EXPECT_NE(svg.find("data-policy=\"login\" data-config=\"config\""), std::string::npos) << svg;
    EXPECT_NE(svg.find("cy=\"14.0\" r=\"3\" fill=\"#d62728\"><title>12:00 UTC, api (baseline): 5 denied"),
              std::string::npos)
        << svg;
    EXPECT_NE(svg.find("cy=\"146.0\" r=\"3\" fill=\"#1f77b4\"><title>12:00 UTC, login (config): 2 denied"),
              std::string::npos)
        << svg;
    // The volume chart: one bar pair per minute, with its figures to hover.
    EXPECT_NE(html.find("<title>12:00 UTC: 6 requests, 2 denied (33.33%); login denied 2</title>"), std::string::npos);
    EXPECT_NE(html.find("<tr class=\"unmatched\"><td>not limited</td><td class=\"n\">2</td>"), std::string::npos);
    EXPECT_NE(html.find("<th>denied %</th>"), std::string::npos);
    EXPECT_NE(html.find("<td class=\"n\">5</td><td class=\"n\">2</td><td class=\"n\">40.00%</td>"), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::simulate
