// The status page's charts (issue 54), rendered by headless Chromium from a live instance on a
// real Redis: the last 15 minutes drawn from GET /v1/status/history, one line per verdict,
// per denying policy and per store quantile, with their points, time labels, hover titles and
// legends; the heavy hitters' accuracy in words. Screenshots at a desktop's and a phone's width
// are kept in <build>/test-artefacts.
#include "support/chromium.hpp"
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

namespace ratelimitd::test::status_charts_test {
namespace {

using namespace std::chrono_literals;

const char* const config = R"(
policies:
  login: { algorithm: fixed_window, limit: 3, window: 60s }
  search: { algorithm: sliding_window, limit: 1000, window: 60s }
)";

/// The text between `<svg id="ID"` and its `</svg>` in `dom`.
std::string svg_of(const std::string& dom, const std::string& id) {
    const auto at = dom.find("<svg id=\"" + id + "\"");
    return at == std::string::npos ? "" : dom.substr(at, dom.find("</svg>", at) - at);
}

/// Every value of `attribute` in `text`, in order.
std::vector<std::string> values_of(const std::string& text, const std::string& attribute) {
    std::vector<std::string> out;
    const std::regex re(attribute + "=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
        out.push_back((*it)[1]);
    }
    return out;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

std::uint64_t summed(const nlohmann::json& samples, const std::string& part, const std::string& name) {
    std::uint64_t sum = 0;
    for (const auto& s : samples) sum += s[part].value(name, std::uint64_t{0});
    return sum;
}

/// A hover title per sample, and time labels (HH:MM) every 3 minutes across 15.
void expect_hover_titles_and_time_labels(const std::string& checks, std::size_t n) {
    EXPECT_EQ(count(checks, "<rect class=\"hover\""), n);
    const auto labels = std::regex_replace(checks, std::regex("<text class=\"x-label\"[^>]*>(\\d\\d:\\d\\d)</text>"), "@");
    EXPECT_GE(count(labels, "@"), 5u) << checks;
    EXPECT_LE(count(labels, "@"), 6u) << checks;
}

/// Denials: login only (search never denied). The store: p50 and p99, a point for each sample
/// in which the store was asked. The events' three series, and a point per sample held.
void expect_the_denials_store_events_and_held_charts(const std::string& dom, std::size_t n) {
    EXPECT_EQ(values_of(svg_of(dom, "chart-denials"), "data-series"), (std::vector<std::string>{"login"}));
    const std::string store = svg_of(dom, "chart-store");
    EXPECT_EQ(values_of(store, "data-series"), (std::vector<std::string>{"p50", "p99"}));
    EXPECT_GE(std::stoul(values_of(store, "data-points").at(0)), 1u);
    EXPECT_EQ(values_of(svg_of(dom, "chart-events"), "data-series"),
              (std::vector<std::string>{"store errors", "webhooks sent", "webhooks dropped"}));
    EXPECT_EQ(values_of(svg_of(dom, "chart-held"), "data-points"), (std::vector<std::string>{std::to_string(n)}));
}

TEST(StatusCharts, ChromiumDrawsTheLastMinutesOfALiveInstance) {
    if (!chromium_installed()) GTEST_SKIP() << "chromium is not installed (install-deps.sh all)";
    RedisServer redis;
    Ratelimitd server(config, redis.url());
    HttpClient c(server.port());
    int denied = 0;
    for (int i = 0; i < 10; ++i) {
        denied += c.post("/v1/check", R"({"policy":"login","tenant":"ip:192.0.2.7"})").status == 429;
        c.post("/v1/check", R"({"policy":"search","tenant":"reader-1"})");
    }
    ASSERT_EQ(denied, 7);
    // The sampler records every 5 s: await three samples, every check counted in them.
    nlohmann::json history;
    ASSERT_TRUE(wait_until(
        [&] {
            history = nlohmann::json::parse(c.get("/v1/status/history").body);
            return history["samples"].size() >= 3 && summed(history["samples"], "checks", "allowed") == 13;
        },
        60s, 200ms))
        << history.dump();
    EXPECT_EQ(summed(history["samples"], "checks", "denied"), 7u);
    EXPECT_EQ(summed(history["samples"], "denied", "login"), 7u);
    EXPECT_EQ(summed(history["samples"], "denied", "search"), 0u);

    const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/";
    const std::string dom = chromium_dom(url, 4000);
    ASSERT_NE(dom.find("<title>ratelimitd status</title>"), std::string::npos) << dom;
    const std::string checks = svg_of(dom, "chart-checks");
    const auto samples = values_of(checks, "data-samples");
    ASSERT_EQ(samples.size(), 1u) << checks;
    const std::size_t n = std::stoul(samples[0]);
    EXPECT_GE(n, history["samples"].size());
    // One line per verdict, a point per sample on each, stacked over a filled area.
    EXPECT_EQ(values_of(checks, "data-series"),
              (std::vector<std::string>{"allowed", "denied", "shadow_denied", "degraded_allowed", "failed_closed"}));
    for (const auto& points : values_of(checks, "data-points")) EXPECT_EQ(points, std::to_string(n));
    EXPECT_EQ(count(checks, "<polygon"), 5u);
    expect_hover_titles_and_time_labels(checks, n);
    // The legend: a swatch and a name per verdict.
    const auto legend_at = dom.find("<p class=\"legend\" id=\"chart-checks-legend\">");
    ASSERT_NE(legend_at, std::string::npos);
    const std::string legend = dom.substr(legend_at, dom.find("</p>", legend_at) - legend_at);
    EXPECT_EQ(count(legend, "<span class=\"swatch\""), 5u) << legend;
    EXPECT_NE(legend.find("></span>degraded_allowed</span>"), std::string::npos) << legend;
    expect_the_denials_store_events_and_held_charts(dom, n);
    // The heavy hitters' error in words: 7 denials counted exactly.
    EXPECT_NE(dom.find("<td>login</td><td>ip:192.0.2.7</td><td class=\"n\">7</td><td>exact</td>"), std::string::npos)
        << dom;
    EXPECT_NE(dom.find("id=\"top-accuracy\""), std::string::npos);

    EXPECT_NE(chromium_screenshot(url, "status-1280.png", 1280, 1900, 4000), "");
    EXPECT_NE(chromium_screenshot(url, "status-phone.png", 390, 3200, 4000), "");
}

}  // namespace
}  // namespace ratelimitd::test::status_charts_test
