// `ratelimitd simulate --html`: the page headless Chromium renders answers first (the
// difference from the baseline), then the request volume with its denied share, one denials
// chart for both configs, and the tables; it loads nothing from elsewhere. The screenshots are
// kept in <build>/test-artefacts.
#include "simulate_support.hpp"
#include "support/chromium.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace ratelimitd::test::simulate_html_test {
namespace {

const char* const config = R"(
policies:
  login: { algorithm: fixed_window, limit: 2, window: 1m }
  search: { algorithm: sliding_log, limit: 3, window: 1m }
  api: { algorithm: token_bucket, limit: 1000, window: 1m }
routes:
  - { path: /login, policy: login }
  - { path: /search, policy: search }
  - { path: "/*", policy: api }
)";

const char* const baseline = R"(
policies:
  login: { algorithm: fixed_window, limit: 100, window: 1m }
routes:
  - { path: /login, policy: login }
)";

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// The text between `<svg id="ID"` and its `</svg>`.
std::string svg_of(const std::string& dom, const std::string& id) {
    const auto at = dom.find("<svg id=\"" + id + "\"");
    return at == std::string::npos ? "" : dom.substr(at, dom.find("</svg>", at) - at);
}

// The points attribute of the polyline of `policy` under `config`.
std::string points_of(const std::string& chart, const std::string& policy, const std::string& config) {
    const auto at = chart.find("data-policy=\"" + policy + "\" data-config=\"" + config + "\"");
    if (at == std::string::npos) return "";
    const auto points_at = chart.find("points=\"", at) + 8;
    return chart.substr(points_at, chart.find('"', points_at) - points_at);
}

/// Three minutes of nginx lines, 70 s apart from `noon`; login and search deny in each, api never.
std::string three_minutes_of_log(std::int64_t noon) {
    std::string log;
    for (int minute = 0; minute < 3; ++minute) {
        for (int i = 0; i < 5; ++i) {
            const std::int64_t t = noon + minute * 70'000 + i * 1000;  // windows never straddle
            log += nginx_line({t, "192.0.2.1", "POST", "/login", ""});
            log += nginx_line({t, "192.0.2.2", "GET", "/search?q=" + std::to_string(i), ""});
            log += nginx_line({t, "192.0.2.3", "GET", "/home", ""});
        }
    }
    return log;
}

/// Self-contained: no script, and nothing fetched from elsewhere.
void expect_a_self_contained_page(const std::string& html) {
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("http://"), std::string::npos);
    EXPECT_EQ(html.find("https://"), std::string::npos);
    EXPECT_EQ(html.find("url("), std::string::npos);
}

/// The volume: one bar pair per minute, 5 of 15 denied in each, and a label per minute.
void expect_one_bar_pair_a_minute(const std::string& dom) {
    const std::string volume = svg_of(dom, "volume");
    EXPECT_EQ(count(volume, "<g class=\"minute\">"), 3u) << volume;
    EXPECT_EQ(count(volume, "15 requests, 5 denied (33.33%)"), 3u) << volume;
    EXPECT_EQ(count(volume, "class=\"x-label\""), 3u) << volume;
    for (const char* label : {">12:00<", ">12:01<", ">12:02<"}) EXPECT_NE(volume.find(label), std::string::npos);
}

/// The denials: the config's two denying policies, one point per minute each; the baseline
/// denies nobody, so it draws no line, and api denies nothing.
void expect_the_denials_of_the_config_only(const std::string& dom) {
    const std::string chart = svg_of(dom, "chart");
    EXPECT_EQ(count(chart, "<polyline"), 2u) << chart;
    EXPECT_EQ(count(points_of(chart, "login", "config"), ","), 3u) << chart;
    EXPECT_EQ(count(points_of(chart, "search", "config"), ","), 3u) << chart;
    EXPECT_EQ(chart.find("data-policy=\"api\""), std::string::npos) << chart;
    EXPECT_EQ(count(chart, "class=\"x-label\""), 3u) << chart;
}

TEST(SimulateHtml, ChromiumRendersTheDifferenceFirstAndBothConfigsOnOneChart) {
    if (!chromium_installed()) GTEST_SKIP() << "chromium is not installed (install-deps.sh all)";
    const std::int64_t noon = utc_ms(2026, 12, 1, 12, 0, 0);
    const auto config_path = write_file("html.yaml", config);
    const auto baseline_path = write_file("html-baseline.yaml", baseline);
    const auto log_path = write_file("html.log", three_minutes_of_log(noon));
    const std::string page = scratch_dir() + "/simulate.html";
    const SimRun run = simulate("--config " + config_path + " --baseline " + baseline_path + " --log " + log_path +
                                " --html " + page + " --json");
    ASSERT_EQ(run.code, 0) << run.err;
    // Every request counted once: the baseline checks only /login, the rest is not limited.
    const auto json = nlohmann::json::parse(run.out);
    EXPECT_EQ(json["requests"], 45);
    EXPECT_EQ(json["unmatched"], 0);
    EXPECT_EQ(json["denied_requests"], 15);
    EXPECT_EQ(json["baseline"]["unmatched"], 30);
    EXPECT_EQ(json["baseline"]["policies"]["login"]["checked"], 15);
    const std::string html = read_file(page);
    expect_a_self_contained_page(html);

    const std::string dom = chromium_dom("file://" + page);
    ASSERT_NE(dom.find("<title>ratelimitd simulate</title>"), std::string::npos) << dom;
    // The answer first: the difference table ahead of the charts and the tables.
    const auto difference = dom.find("<table id=\"difference\">");
    ASSERT_NE(difference, std::string::npos) << dom;
    EXPECT_LT(difference, dom.find("<svg id=\"volume\""));
    EXPECT_LT(dom.find("<svg id=\"volume\""), dom.find("<svg id=\"chart\""));
    EXPECT_LT(dom.find("<svg id=\"chart\""), dom.find("<table id=\"config-policies\">"));
    EXPECT_NE(dom.find("<tr><td>login</td><td class=\"n\">0</td><td class=\"n\">9</td><td class=\"n up\">+9</td>"
                       "<td class=\"n\">1</td><td class=\"n\">0</td></tr>"),
              std::string::npos)
        << dom.substr(difference, 2000);
    EXPECT_NE(dom.find("<p>Requests denied: 0 → 15 of 45"), std::string::npos) << dom.substr(difference - 200, 400);
    expect_one_bar_pair_a_minute(dom);
    expect_the_denials_of_the_config_only(dom);
    // The tables: login denied 3 a minute, search 2 a minute, with the denied share.
    EXPECT_NE(dom.find("<tr><td>login</td><td class=\"n\">15</td><td class=\"n\">9</td><td class=\"n\">60.00%</td>"
                       "<td class=\"n\">1</td></tr>"),
              std::string::npos)
        << dom;
    EXPECT_NE(dom.find("<tr><td>search</td><td class=\"n\">15</td><td class=\"n\">6</td><td class=\"n\">40.00%</td>"
                       "<td class=\"n\">1</td></tr>"),
              std::string::npos)
        << dom;
    EXPECT_NE(dom.find("<tr class=\"unmatched\"><td>not limited</td><td class=\"n\">30</td>"), std::string::npos);
    EXPECT_NE(dom.find("<td>ip:192.0.2.1</td><td class=\"n\">9</td><td>2026-12-01T12:00:02Z</td>"), std::string::npos)
        << dom;
    const auto newly = dom.find("id=\"newly-denied\"");
    ASSERT_NE(newly, std::string::npos);
    EXPECT_NE(dom.find("<td>login</td><td>ip:192.0.2.1</td>", newly), std::string::npos) << dom.substr(newly);
    EXPECT_NE(dom.find("<td>search</td><td>ip:192.0.2.2</td>", newly), std::string::npos) << dom.substr(newly);
    // For a person to look at: a desktop and a phone width.
    EXPECT_NE(chromium_screenshot("file://" + page, "simulate-1280.png", 1280, 1800), "");
    EXPECT_NE(chromium_screenshot("file://" + page, "simulate-phone.png", 390, 2400), "");
}

}  // namespace
}  // namespace ratelimitd::test::simulate_html_test
