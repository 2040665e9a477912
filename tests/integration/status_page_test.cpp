// GET / rendered by headless Chromium from a running instance with denied traffic: the tables
// show the instance's policies, config hash, store health, checks by verdict and the heavy
// hitters; with an admin token the page asks for it instead. The screenshot is kept in the
// build directory (test-artefacts/status_page.png). Virtual time lets the page's fetches and
// its first timed polls complete before the DOM is dumped.
#include "support/chromium.hpp"
#include "support/http_client.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace ratelimitd::test::status_page_test {
namespace {

using namespace std::chrono_literals;

const char* const config = R"(
policies:
  login:
    algorithm: fixed_window
    limit: 3
    window: 60s
  search:
    algorithm: sliding_window
    limit: 1000
    window: 60s
)";

/// The <tbody> of the table with id `id` in `dom` ("" when absent).
std::string table_body(const std::string& dom, const std::string& id) {
    const auto table = dom.find("id=\"" + id + "\"");
    if (table == std::string::npos) return {};
    const auto body = dom.find("<tbody>", table);
    return dom.substr(body, dom.find("</tbody>", body) - body);
}

TEST(StatusPage, ChromiumRendersTheInstancesTables) {
    if (!chromium_installed()) GTEST_SKIP() << "chromium is not installed (install-deps.sh all)";
    Ratelimitd server(config, "");
    HttpClient c(server.port());
    int denied = 0;
    for (int i = 0; i < 10; ++i) {
        denied += c.post("/v1/check", R"({"policy":"login","tenant":"ip:192.0.2.7"})").status == 429;
        c.post("/v1/check", R"({"policy":"search","tenant":"reader-1"})");
    }
    ASSERT_EQ(denied, 7);
    const auto registry = nlohmann::json::parse(c.get("/v1/policies").body);
    const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/";

    const std::string dom = chromium_dom(url, 10000);
    ASSERT_NE(dom.find("<title>ratelimitd status</title>"), std::string::npos) << dom;
    const std::string policies = table_body(dom, "policies");
    EXPECT_NE(policies.find("<td>login</td>"), std::string::npos) << policies;
    EXPECT_NE(policies.find("<td>search</td>"), std::string::npos) << policies;
    EXPECT_NE(policies.find("<td>3/1m</td>"), std::string::npos) << policies;
    EXPECT_NE(dom.find(registry["sha256"].get<std::string>()), std::string::npos);
    EXPECT_NE(dom.find("id=\"store\" class=\"ok\">ready<"), std::string::npos);
    const std::string rates = table_body(dom, "rates");
    EXPECT_NE(rates.find("<td>denied</td><td class=\"n\">7</td>"), std::string::npos) << rates;
    EXPECT_NE(rates.find("<td>allowed</td><td class=\"n\">13</td>"), std::string::npos) << rates;
    // Two polls at least: checks/s is computed in the page between them.
    EXPECT_EQ(rates.find("…"), std::string::npos) << rates;
    EXPECT_NE(dom.find("id=\"login\" hidden"), std::string::npos) << "no token needed on loopback";
    // The heavy hitters: the denied tenant with its 7 denials, error bound 0 (few tenants).
    EXPECT_NE(table_body(dom, "top-denied").find("<td>login</td><td>ip:192.0.2.7</td><td class=\"n\">7</td>"),
              std::string::npos)
        << table_body(dom, "top-denied");
    EXPECT_NE(table_body(dom, "top-admitted").find("<td>search</td><td>reader-1</td><td class=\"n\">10</td>"),
              std::string::npos)
        << table_body(dom, "top-admitted");

    const std::string shot = chromium_screenshot(url, "status_page.png", 1280, 1400, 10000);
    ASSERT_NE(shot, "");
    EXPECT_GT(std::filesystem::file_size(shot), 10'000u) << shot;
}

TEST(StatusPage, WithAnAdminTokenThePageAsksForItAndShowsNoData) {
    if (!chromium_installed()) GTEST_SKIP() << "chromium is not installed (install-deps.sh all)";
    Ratelimitd server(config, "", {}, {"RATELIMITD_ADMIN_TOKEN=page-test-token-0123456789"});
    HttpClient c(server.port());
    const auto page = c.get("/");
    EXPECT_EQ(page.status, 200);
    EXPECT_NE(page.header("content-security-policy").find("default-src 'none'"), std::string::npos);
    const std::string dom = chromium_dom("http://127.0.0.1:" + std::to_string(server.port()) + "/", 10000);
    EXPECT_EQ(dom.find("id=\"login\" hidden"), std::string::npos) << "the token form must show";
    EXPECT_NE(dom.find("enter the admin token"), std::string::npos) << dom;
    EXPECT_EQ(table_body(dom, "policies").find("<td>"), std::string::npos) << "no data without the token";
    // The page loads with no token: the server logged no token anywhere.
    EXPECT_EQ(server.process().log().find("page-test-token"), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::test::status_page_test
