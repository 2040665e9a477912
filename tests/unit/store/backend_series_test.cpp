// metric_families_of: the store's series of /metrics from a backend's stats, in exposition
// order, each part only when the backend has it.
#include "ratelimitd/store/backend.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ratelimitd::store {
namespace {

std::vector<std::string> names(const std::vector<MetricFamily>& families) {
    std::vector<std::string> out;
    for (const auto& f : families) out.push_back(f.name);
    return out;
}

TEST(BackendSeries, WithoutPartsOnlyTheOpenBreakers) {
    BackendStats stats;
    stats.open_breakers = 3;
    const auto families = metric_families_of(stats);
    ASSERT_EQ(names(families), std::vector<std::string>{"ratelimitd_circuit_breakers_open"});
    EXPECT_EQ(families[0].type, "gauge");
    ASSERT_EQ(families[0].samples.size(), 1u);
    EXPECT_EQ(families[0].samples[0].labels, "");
    EXPECT_EQ(families[0].samples[0].value, 3u);
}

TEST(BackendSeries, EveryPartInExpositionOrderWithItsLabels) {
    BackendStats stats;
    stats.batching = BackendStats::Batching{10, 40};
    stats.redirects = BackendStats::Redirects{3, 4};
    stats.connections = BackendStats::Connections{5, 6, 7};
    stats.keys = BackendStats::Keys{8, 9};
    const auto families = metric_families_of(stats);
    EXPECT_EQ(names(families),
              (std::vector<std::string>{"ratelimitd_circuit_breakers_open", "ratelimitd_redis_check_calls_total",
                                        "ratelimitd_redis_coalesced_checks_total",
                                        "ratelimitd_redis_cluster_redirects_total", "ratelimitd_redis_connections",
                                        "ratelimitd_memory_store_keys", "ratelimitd_memory_store_evictions_total"}));
    const MetricFamily& connections = families[4];
    ASSERT_EQ(connections.samples.size(), 3u);
    EXPECT_EQ(connections.samples[2].labels, R"(state="disconnected")");
    EXPECT_EQ(connections.samples[2].value, 7u);
    EXPECT_EQ(families[3].samples[1].labels, R"(kind="ask")");
    EXPECT_EQ(families[3].samples[1].value, 4u);
}

}  // namespace
}  // namespace ratelimitd::store
