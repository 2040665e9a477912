// Metrics: the series of the connection cap, and the store's series through their seam.
#include "ratelimitd/service/metrics.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ratelimitd::service {
namespace {

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(Metrics, RejectedConnectionsAreCounted) {
    Metrics m;
    EXPECT_TRUE(has_line(m.render("1", "embedded"), "ratelimitd_connections_rejected_total 0"));
    m.count_connection_rejected();
    m.count_connection_rejected();
    const std::string text = m.render("1", "embedded");
    EXPECT_TRUE(has_line(text, "# TYPE ratelimitd_connections_rejected_total counter")) << text;
    EXPECT_TRUE(has_line(text, "ratelimitd_connections_rejected_total 2")) << text;
}

// Opened counts into the total and the gauge; closed leaves the total alone, so a scrape
// taken after a burst still tells how many connections the burst cost.
TEST(Metrics, AcceptedConnectionsAreCountedAndNeverCountedOut) {
    Metrics m;
    EXPECT_TRUE(has_line(m.render("1", "embedded"), "ratelimitd_connections_accepted_total 0"));
    m.connection_opened();
    m.connection_opened();
    m.connection_closed();
    const std::string text = m.render("1", "embedded");
    EXPECT_TRUE(has_line(text, "# TYPE ratelimitd_connections_accepted_total counter")) << text;
    EXPECT_TRUE(has_line(text, "ratelimitd_connections_accepted_total 2")) << text;
    EXPECT_TRUE(has_line(text, "ratelimitd_connections_open 1")) << text;
}

// The store's series (tests/unit/app/backend_metrics_test.cpp names them) come through one
// seam and are rendered as given, after the store's latency.
TEST(Metrics, StoreSeriesAreRenderedAsGivenAtEachScrape) {
    Metrics m;
    EXPECT_EQ(m.render("1", "x").find("ratelimitd_test_"), std::string::npos);
    std::uint64_t value = 5;
    m.set_store_series([&value] {
        return std::vector<MetricFamily>{
            {"ratelimitd_test_total", "counter", "A test counter.", {{"", value}}},
            {"ratelimitd_test_state", "gauge", "A test gauge.", {{R"(state="up")", 1}, {R"(state="down")", 0}}}};
    });
    value = 6;
    const std::string text = m.render("1", "x");
    EXPECT_TRUE(has_line(text, "# HELP ratelimitd_test_total A test counter.")) << text;
    EXPECT_TRUE(has_line(text, "# TYPE ratelimitd_test_total counter")) << text;
    EXPECT_TRUE(has_line(text, "ratelimitd_test_total 6")) << text;
    EXPECT_TRUE(has_line(text, "# TYPE ratelimitd_test_state gauge")) << text;
    EXPECT_TRUE(has_line(text, R"(ratelimitd_test_state{state="up"} 1)")) << text;
    EXPECT_TRUE(has_line(text, R"(ratelimitd_test_state{state="down"} 0)")) << text;
    EXPECT_LT(text.find("ratelimitd_store_latency_seconds_count"), text.find("ratelimitd_test_total")) << text;
}

}  // namespace
}  // namespace ratelimitd::service
