// Metrics: the series of the connection cap and of the embedded store's key cap.
#include "ratelimitd/service/metrics.hpp"

#include <gtest/gtest.h>

#include <string>

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

TEST(Metrics, MemoryStoreSeriesAppearOnlyWithTheEmbeddedStore) {
    Metrics m;
    EXPECT_EQ(m.render("1", "redis").find("ratelimitd_memory_store"), std::string::npos);
    m.set_memory_store_stats([] { return MemoryStoreStats{640, 9360}; });
    const std::string text = m.render("1", "embedded");
    EXPECT_TRUE(has_line(text, "# TYPE ratelimitd_memory_store_keys gauge")) << text;
    EXPECT_TRUE(has_line(text, "ratelimitd_memory_store_keys 640")) << text;
    EXPECT_TRUE(has_line(text, "# TYPE ratelimitd_memory_store_evictions_total counter")) << text;
    EXPECT_TRUE(has_line(text, "ratelimitd_memory_store_evictions_total 9360")) << text;
}

}  // namespace
}  // namespace ratelimitd::service
