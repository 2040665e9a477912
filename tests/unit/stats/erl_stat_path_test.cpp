// Stat names as envoyproxy/ratelimit sanitizes them, and the table's bounds.
#include "ratelimitd/stats/erl_stat_path.hpp"
#include "ratelimitd/stats/erl_stat_table.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::stats {
namespace {

TEST(ErlStatPath, SanitizeReplacesColonsPipesAndIpv4Dots) {
    EXPECT_EQ(sanitize_stat_name("edge.remote_address_10.0.0.1"), "edge.remote_address_10_0_0_1");
    EXPECT_EQ(sanitize_stat_name("edge.host_a:80|b"), "edge.host_a_80_b");
    EXPECT_EQ(sanitize_stat_name("edge.v_1.2.3"), "edge.v_1.2.3") << "three numbers are no address";
    EXPECT_EQ(sanitize_stat_name("d.k_1234.5.6.7"), "d.k_1234_5_6_7") << "leftmost match starts at 234";
    EXPECT_EQ(sanitize_stat_name("d.k_a b\n"), "d.k_a_b_") << "a byte that would end a statsd line";
}

TEST(ErlStatPath, OverridePathKeysEveryEntry) {
    const std::vector<policy::RlsEntry> entries{{"remote_address", "10.0.0.1"}, {"path", ""}};
    EXPECT_EQ(override_stat_path("edge", entries), "edge.remote_address_10.0.0.1.path");
}

TEST(ErlStatTable, ValueKeysAreBoundedAndDropsAreCounted) {
    ErlStatTable table(/*max_keys=*/4, /*max_value_keys=*/2);
    const auto* configured = table.descriptor("edge.user", KeyOrigin::config);
    ASSERT_NE(configured, nullptr);
    EXPECT_EQ(configured->counters[DescriptorCounters::total_hits]->name,
              "ratelimit.service.rate_limit.edge.user.total_hits");
    EXPECT_EQ(table.descriptor("edge.user", KeyOrigin::values), configured) << "a name made is found again";
    EXPECT_NE(table.descriptor("edge.user_a", KeyOrigin::values), nullptr);
    EXPECT_NE(table.descriptor("edge.user_b", KeyOrigin::values), nullptr);
    EXPECT_EQ(table.descriptor("edge.user_c", KeyOrigin::values), nullptr);
    EXPECT_EQ(table.dropped(), 1u);
    EXPECT_NE(table.descriptor("edge.route", KeyOrigin::config), nullptr) << "configured paths have the rest";
    EXPECT_EQ(table.descriptor("edge.other", KeyOrigin::config), nullptr);
    EXPECT_EQ(table.dropped(), 2u);
    EXPECT_EQ(table.size(), 4u * 5u);
    EXPECT_EQ(table.at(19).name, "ratelimit.service.rate_limit.edge.route.shadow_mode");
}

}  // namespace
}  // namespace ratelimitd::stats
