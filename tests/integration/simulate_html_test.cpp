// `ratelimitd simulate --html`: the page headless Chromium renders holds the chart (one line
// per policy that denied) and the tables, and loads nothing from elsewhere.
#include "simulate_support.hpp"

#include <gtest/gtest.h>

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

std::string chromium_dom(const std::string& file) {
    const std::string dir = scratch_dir() + "/chromium-sim-" + std::to_string(free_port());
    const std::string command = "chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" + dir +
                                " --dump-dom 'file://" + file + "' >" + dir + ".out 2>" + dir + ".err";
    Child child({"/bin/sh", "-c", command}, dir + ".log");
    EXPECT_EQ(child.wait(90s), 0) << read_file(dir + ".err");
    return read_file(dir + ".out");
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST(SimulateHtml, ChromiumRendersTheChartWithOneLinePerDenyingPolicy) {
    if (!std::filesystem::exists("/usr/bin/chromium")) GTEST_SKIP() << "chromium is not installed (install-deps.sh all)";
    const std::int64_t noon = utc_ms(2026, 12, 1, 12, 0, 0);
    std::string log;
    // Three minutes, 70 s apart; login and search deny in each, api never.
    for (int minute = 0; minute < 3; ++minute) {
        for (int i = 0; i < 5; ++i) {
            const std::int64_t t = noon + minute * 70'000 + i * 1000;  // windows never straddle
            log += nginx_line({t, "192.0.2.1", "POST", "/login", ""});
            log += nginx_line({t, "192.0.2.2", "GET", "/search?q=" + std::to_string(i), ""});
            log += nginx_line({t, "192.0.2.3", "GET", "/home", ""});
        }
    }
    const auto config_path = write_file("html.yaml", config);
    const auto baseline_path = write_file("html-baseline.yaml", baseline);
    const auto log_path = write_file("html.log", log);
    const std::string page = scratch_dir() + "/simulate.html";
    const SimRun run = simulate("--config " + config_path + " --baseline " + baseline_path + " --log " + log_path +
                             " --html " + page + " --json");
    ASSERT_EQ(run.code, 0) << run.err;
    const std::string html = read_file(page);
    // Self-contained: no script, and nothing fetched from elsewhere.
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("http://"), std::string::npos);
    EXPECT_EQ(html.find("https://"), std::string::npos);
    EXPECT_EQ(html.find("url("), std::string::npos);

    const std::string dom = chromium_dom(page);
    ASSERT_NE(dom.find("<title>ratelimitd simulate</title>"), std::string::npos) << dom;
    const auto chart_at = dom.find("<svg id=\"chart\"");
    ASSERT_NE(chart_at, std::string::npos) << dom;
    const std::string chart = dom.substr(chart_at, dom.find("</svg>", chart_at) - chart_at);
    EXPECT_EQ(count(chart, "<polyline"), 2u) << chart;
    EXPECT_NE(chart.find("data-policy=\"login\""), std::string::npos) << chart;
    EXPECT_NE(chart.find("data-policy=\"search\""), std::string::npos) << chart;
    EXPECT_EQ(chart.find("data-policy=\"api\""), std::string::npos) << chart;
    // One point per minute on each line.
    const auto points_at = chart.find("points=\"", chart.find("data-policy=\"login\""));
    const std::string points = chart.substr(points_at, chart.find('"', points_at + 8) - points_at);
    EXPECT_EQ(count(points, ","), 3u) << points;
    // The tables: login denied 3 a minute, search 2 a minute.
    EXPECT_NE(dom.find("<tr><td>login</td><td class=\"n\">15</td><td class=\"n\">9</td><td class=\"n\">1</td></tr>"),
              std::string::npos)
        << dom;
    EXPECT_NE(dom.find("<tr><td>search</td><td class=\"n\">15</td><td class=\"n\">6</td><td class=\"n\">1</td></tr>"),
              std::string::npos)
        << dom;
    EXPECT_NE(dom.find("<td>ip:192.0.2.1</td><td class=\"n\">9</td><td>2026-12-01T12:00:02Z</td>"), std::string::npos)
        << dom;
    // The baseline denies nobody: its chart says so, and login's tenant is newly denied.
    EXPECT_NE(dom.find("No request was denied."), std::string::npos);
    const auto newly = dom.find("id=\"newly-denied\"");
    ASSERT_NE(newly, std::string::npos);
    EXPECT_NE(dom.find("<td>login</td><td>ip:192.0.2.1</td>", newly), std::string::npos) << dom.substr(newly);
    EXPECT_NE(dom.find("<td>search</td><td>ip:192.0.2.2</td>", newly), std::string::npos) << dom.substr(newly);
}

}  // namespace
}  // namespace ratelimitd::test::simulate_html_test
