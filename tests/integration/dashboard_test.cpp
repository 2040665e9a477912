// deploy/grafana/ratelimitd.json against a real Prometheus that scraped a real ratelimitd
// (Redis store) under load: every panel query, with the dashboard's variables substituted,
// answers without error and with data.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/prometheus.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <fstream>
#include <thread>

namespace ratelimitd::test::dashboard_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const char* const config = R"(
policies:
  login:
    algorithm: fixed_window
    limit: 20
    window: 60s
  api:
    algorithm: token_bucket
    limit: 100000
    window: 60s
)";

/// What Grafana would put in place of the variables: every instance and policy, and a rate
/// window that spans several 1 s scrapes.
std::string substitute(std::string expr) {
    const std::pair<std::string, std::string> variables[] = {
        {"$__rate_interval", "15s"}, {"$instance", ".*"}, {"$policy", ".*"}};
    for (const auto& [name, value] : variables) {
        for (auto at = expr.find(name); at != std::string::npos; at = expr.find(name, at + value.size())) {
            expr.replace(at, name.size(), value);
        }
    }
    return expr;
}

/// Every panel of the dashboard, rows' nested panels included.
void collect_panels(const json& panels, std::vector<json>& out) {
    for (const auto& p : panels) {
        if (p.contains("targets")) out.push_back(p);
        if (p.contains("panels")) collect_panels(p["panels"], out);
    }
}

/// Checks at a steady pace until stopped: allowed ones on api, denied ones on login.
class BackgroundLoad {
public:
    explicit BackgroundLoad(unsigned short port)
        : thread_([this, port] {
              HttpClient c(port);
              for (int i = 0; !stop_; ++i) {
                  const auto r = c.post("/v1/check", i % 2 ? R"({"policy":"api","tenant":"steady"})"
                                                           : R"({"policy":"login","tenant":"ip:192.0.2.7"})");
                  if (r.status == 429) ++denied_;
                  ++sent_;
                  std::this_thread::sleep_for(5ms);  // a pace, not a wait for a condition
              }
          }) {}
    ~BackgroundLoad() {
        stop_ = true;
        thread_.join();
    }
    int sent() const { return sent_; }
    int denied() const { return denied_; }

private:
    std::atomic<bool> stop_{false};
    std::atomic<int> sent_{0};
    std::atomic<int> denied_{0};
    std::thread thread_;
};

TEST(Dashboard, EveryPanelQueryReturnsDataFromARealPrometheus) {
    std::ifstream file(std::string(RATELIMITD_SOURCE_DIR) + "/deploy/grafana/ratelimitd.json");
    const json dashboard = json::parse(file);
    std::vector<json> panels;
    collect_panels(dashboard["panels"], panels);
    ASSERT_GE(panels.size(), 15u);

    RedisServer redis;
    Ratelimitd server(config, redis.url());
    // One accepted reload, so the reload panels have a reload to show.
    server.process().signal(SIGHUP);
    ASSERT_FALSE(server.process().wait_for_log("reloaded", 10s).empty());
    PrometheusServer prometheus(server.port(), 1s);

    BackgroundLoad load(server.port());
    ASSERT_TRUE(wait_until([&] { return load.sent() >= 300 && load.denied() >= 50; }, 30s));
    // Enough scrapes with load inside one rate window for every rate() to have two samples.
    ASSERT_TRUE(wait_until(
        [&] { return prometheus.scalar(R"(count_over_time(ratelimitd_build_info{job="ratelimitd"}[15s]))") >= 5; },
        30s, 250ms));

    std::vector<std::string> failures;
    for (const auto& panel : panels) {
        for (const auto& target : panel["targets"]) {
            const std::string expr = substitute(target["expr"].get<std::string>());
            const json answer = prometheus.query(expr);
            const std::string where = "panel \"" + panel["title"].get<std::string>() + "\" (" +
                                      target["refId"].get<std::string>() + ") " + expr;
            if (answer.value("status", "") != "success") {
                failures.push_back(where + ": error " + answer.value("error", answer.dump()));
            } else if (answer["data"]["result"].empty()) {
                failures.push_back(where + ": no data");
            }
        }
    }
    EXPECT_TRUE(failures.empty()) << [&] {
        std::string all;
        for (const auto& f : failures) all += f + "\n";
        return all;
    }();
}

TEST(Dashboard, SubstitutesEveryVariable) {
    std::ifstream file(std::string(RATELIMITD_SOURCE_DIR) + "/deploy/grafana/ratelimitd.json");
    std::vector<json> panels;
    collect_panels(json::parse(file)["panels"], panels);
    for (const auto& panel : panels) {
        for (const auto& target : panel["targets"]) {
            EXPECT_EQ(substitute(target["expr"].get<std::string>()).find('$'), std::string::npos)
                << panel["title"] << ": a variable the test does not know";
        }
    }
}

}  // namespace
}  // namespace ratelimitd::test::dashboard_test
