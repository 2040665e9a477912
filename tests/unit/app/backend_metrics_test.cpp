// report_backend_stats: each part of a backend's stats becomes its metric series, read at
// each scrape; the parts a backend lacks are not rendered. (The embedded store's and the
// Redis connections' tests were in tests/unit/service/ while Metrics named those series.)
#include "ratelimitd/app/backend_metrics.hpp"

#include "support/metrics_text.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace ratelimitd::app {
namespace {

/// A backend that only reports the stats it is given (no stores).
class StatsOnlyBackend final : public store::Backend {
public:
    std::string_view kind() const noexcept override { return "fake"; }
    store::Store& add_thread(boost::asio::any_io_executor) override { std::abort(); }
    void start(boost::asio::any_io_executor) override {}
    void stop() override {}
    void stop_thread(std::size_t) override {}
    store::BackendStats stats() const override { return stats_; }
    std::string describe() const override { return "fake"; }

    store::BackendStats stats_;
};

bool has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos;
}

using test::sample;

TEST(BackendMetrics, RendersOnlyThePartsTheBackendHas) {
    StatsOnlyBackend backend;
    backend.stats_.keys = store::BackendStats::Keys{7, 1};
    service::Metrics metrics;
    report_backend_stats(metrics, backend);
    const auto text = metrics.render("test", "fake");
    EXPECT_TRUE(has(text, "ratelimitd_memory_store_keys 7\n")) << text;
    EXPECT_TRUE(has(text, "ratelimitd_memory_store_evictions_total 1\n")) << text;
    EXPECT_TRUE(has(text, "ratelimitd_circuit_breakers_open 0\n")) << text;
    EXPECT_FALSE(has(text, "ratelimitd_redis_check_calls_total")) << text;
    EXPECT_FALSE(has(text, "ratelimitd_redis_cluster_redirects_total")) << text;
}

TEST(BackendMetrics, ReadsTheStatsAtEachScrape) {
    StatsOnlyBackend backend;
    backend.stats_.batching = store::BackendStats::Batching{};
    backend.stats_.redirects = store::BackendStats::Redirects{};
    service::Metrics metrics;
    report_backend_stats(metrics, backend);
    backend.stats_.open_breakers = 2;
    backend.stats_.batching = store::BackendStats::Batching{10, 40};
    backend.stats_.redirects = store::BackendStats::Redirects{3, 4};
    const auto text = metrics.render("test", "fake");
    EXPECT_TRUE(has(text, "ratelimitd_circuit_breakers_open 2\n")) << text;
    EXPECT_TRUE(has(text, "ratelimitd_redis_check_calls_total 10\n")) << text;
    EXPECT_TRUE(has(text, "ratelimitd_redis_coalesced_checks_total 40\n")) << text;
    EXPECT_TRUE(has(text, "ratelimitd_redis_cluster_redirects_total{kind=\"moved\"} 3\n")) << text;
    EXPECT_TRUE(has(text, "ratelimitd_redis_cluster_redirects_total{kind=\"ask\"} 4\n")) << text;
    EXPECT_FALSE(has(text, "ratelimitd_memory_store_keys")) << text;
}

TEST(BackendMetrics, MemoryStoreSeriesAppearOnlyWithTheEmbeddedStore) {
    service::Metrics m;
    EXPECT_EQ(m.render("1", "redis").find("ratelimitd_memory_store"), std::string::npos);
    StatsOnlyBackend backend;
    backend.stats_.keys = store::BackendStats::Keys{640, 9360};
    report_backend_stats(m, backend);
    const std::string text = m.render("1", "embedded");
    EXPECT_TRUE(has_line(text, "# TYPE ratelimitd_memory_store_keys gauge")) << text;
    EXPECT_TRUE(has_line(text, "ratelimitd_memory_store_keys 640")) << text;
    EXPECT_TRUE(has_line(text, "# TYPE ratelimitd_memory_store_evictions_total counter")) << text;
    EXPECT_TRUE(has_line(text, "ratelimitd_memory_store_evictions_total 9360")) << text;
}

TEST(BackendMetrics, RedisConnectionsAppearOnlyWhenReported) {
    service::Metrics m;
    EXPECT_EQ(m.render("1", "embedded").find("ratelimitd_redis_connections"), std::string::npos);
    StatsOnlyBackend backend;
    backend.stats_.connections = store::BackendStats::Connections{3, 1, 2};
    report_backend_stats(m, backend);
    const std::string text = m.render("1", "redis");
    EXPECT_EQ(sample(text, R"(ratelimitd_redis_connections{state="connected"})"), 3) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_redis_connections{state="connecting"})"), 1) << text;
    EXPECT_EQ(sample(text, R"(ratelimitd_redis_connections{state="disconnected"})"), 2) << text;
}

}  // namespace
}  // namespace ratelimitd::app
