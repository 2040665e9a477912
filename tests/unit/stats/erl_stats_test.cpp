// ErlStats counts a decided call as envoyproxy/ratelimit's base limiter does: total_hits the
// hits, within_limit the admitted hits, near_limit those past floor(limit * ratio), over_limit
// the denied ones, shadow_mode the denied ones of a shadow rule; names by the rule's path, by
// the values for detailed_metric.
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/stats/erl_stats.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>

namespace ratelimitd::stats {
namespace {

const char* const config = R"(
domains:
  - domain: edge
    descriptors:
      - key: user
        rate_limit: {unit: hour, requests_per_unit: 10}
      - key: tenant
        shadow_mode: true
        rate_limit: {unit: hour, requests_per_unit: 10}
      - key: remote_address
        detailed_metric: true
        rate_limit: {unit: hour, requests_per_unit: 10}
)";

class ErlStatsCounting : public ::testing::Test {
protected:
    ErlStatsCounting() {
        auto cfg = policy::parse_config(config, "stats.yaml");
        registry_ = std::make_shared<const policy::Registry>(std::move(cfg.registry));
    }

    /// One call of `hits` on `key`=`value`, its window decided `allowed` with `remaining` left
    /// and the count `past_limit` past the limit (the store's, as lua/erl_fixed_window.lua answers).
    void count(const std::string& key, const std::string& value, std::uint64_t hits, bool allowed,
               std::int64_t remaining, std::int64_t past_limit = 0) {
        const policy::RlsRequest req{"edge", {{{{key, value}}, hits, std::nullopt}}, 0};
        policy::EnvoyKeys keys;
        keys.erl = true;
        auto plan = policy::plan(registry_, req, keys);
        ASSERT_TRUE(plan.has_value()) << plan.error().detail;
        service::Decision decision;
        check::WindowState w;
        w.allowed = allowed;
        w.remaining = remaining;
        w.past_limit = past_limit;
        decision.verdict.windows.push_back(w);
        decision.owner.push_back(0);
        stats_.count_call(req, *plan, &decision, false);
    }
    /// Every counter that moved, by name.
    std::map<std::string, std::uint64_t> moved() const {
        std::map<std::string, std::uint64_t> out;
        for (std::size_t i = 0; i < stats_.table().size(); ++i) {
            const auto& c = stats_.table().at(i);
            if (const auto v = c.value.load(); v != 0) out[c.name] = v;
        }
        return out;
    }

    std::shared_ptr<const policy::Registry> registry_;
    ErlStats stats_;
};

TEST_F(ErlStatsCounting, HitsSplitAtTheNearThresholdAsItsBaseLimiterSplitsThem) {
    count("user", "a", 3, true, 4);   // 3 -> 6: within, none past 8
    count("user", "a", 3, true, 1);   // 6 -> 9: within, 1 past 8
    count("user", "a", 1, true, 0);   // 9 -> 10: within, all past 8
    count("user", "a", 2, false, 0);  // over
    const std::map<std::string, std::uint64_t> expected{
        {"ratelimit.service.rate_limit.edge.user.total_hits", 9},
        {"ratelimit.service.rate_limit.edge.user.within_limit", 7},
        {"ratelimit.service.rate_limit.edge.user.near_limit", 2},
        {"ratelimit.service.rate_limit.edge.user.over_limit", 2},
    };
    EXPECT_EQ(moved(), expected);
}

// Its base limiter's figures for a call that crosses the limit: 10/h, near ratio 0.8 (threshold
// 8), the counter at 7, hits_addend 5 -> 12: 2 over (11, 12), 2 near (9, 10), none within (the
// 8th is counted nowhere, as there).
TEST_F(ErlStatsCounting, ACrossingCallSplitsItsHitsAsItsBaseLimiterDoes) {
    count("user", "a", 7, true, 3);         // 0 -> 7
    count("user", "a", 5, false, 0, 2);     // 7 -> 12
    const std::map<std::string, std::uint64_t> expected{
        {"ratelimit.service.rate_limit.edge.user.total_hits", 12},
        {"ratelimit.service.rate_limit.edge.user.within_limit", 7},
        {"ratelimit.service.rate_limit.edge.user.near_limit", 2},
        {"ratelimit.service.rate_limit.edge.user.over_limit", 2},
    };
    EXPECT_EQ(moved(), expected);
}

// Already past the limit before the call (12 -> 15): all 3 over. From the denial cache (no
// count): all over too, as its local cache counts them.
TEST_F(ErlStatsCounting, ACallPastTheLimitOrFromTheDenialCacheCountsAllOver) {
    count("user", "b", 3, false, 0, 5);
    count("user", "b", 4, false, 0, 0);
    const std::map<std::string, std::uint64_t> expected{
        {"ratelimit.service.rate_limit.edge.user.total_hits", 7},
        {"ratelimit.service.rate_limit.edge.user.over_limit", 7},
    };
    EXPECT_EQ(moved(), expected);
}

// A shadow rule crossing its limit (8 -> 11 of 10): shadow_mode counts the hits past it.
TEST_F(ErlStatsCounting, AShadowRuleCrossingItsLimitCountsThoseOverAsShadow) {
    count("tenant", "t", 8, true, 2);
    count("tenant", "t", 3, false, 0, 1);
    const std::map<std::string, std::uint64_t> expected{
        {"ratelimit.service.rate_limit.edge.tenant.total_hits", 11},
        {"ratelimit.service.rate_limit.edge.tenant.within_limit", 8},
        {"ratelimit.service.rate_limit.edge.tenant.near_limit", 2},
        {"ratelimit.service.rate_limit.edge.tenant.over_limit", 1},
        {"ratelimit.service.rate_limit.edge.tenant.shadow_mode", 1},
    };
    EXPECT_EQ(moved(), expected);
}

TEST_F(ErlStatsCounting, AShadowRulesDenialsCountOverAndShadow) {
    count("tenant", "t", 1, false, 0);
    const std::map<std::string, std::uint64_t> expected{
        {"ratelimit.service.rate_limit.edge.tenant.total_hits", 1},
        {"ratelimit.service.rate_limit.edge.tenant.over_limit", 1},
        {"ratelimit.service.rate_limit.edge.tenant.shadow_mode", 1},
    };
    EXPECT_EQ(moved(), expected);
}

TEST_F(ErlStatsCounting, DetailedMetricNamesByTheValueSentSanitized) {
    count("remote_address", "10.1.2.3", 1, true, 9);
    count("remote_address", "a:b", 1, true, 9);
    const std::map<std::string, std::uint64_t> expected{
        {"ratelimit.service.rate_limit.edge.remote_address_10_1_2_3.total_hits", 1},
        {"ratelimit.service.rate_limit.edge.remote_address_10_1_2_3.within_limit", 1},
        {"ratelimit.service.rate_limit.edge.remote_address_a_b.total_hits", 1},
        {"ratelimit.service.rate_limit.edge.remote_address_a_b.within_limit", 1},
    };
    EXPECT_EQ(moved(), expected);
}

TEST_F(ErlStatsCounting, AStoreFailureCountsRedisErrorAndARefusalServiceError) {
    stats_.count_failure(errc::store_timeout);
    stats_.count_failure(errc::store_unavailable);
    stats_.count_failure(errc::invalid_request);
    const std::map<std::string, std::uint64_t> expected{
        {"ratelimit.service.call.should_rate_limit.redis_error", 2},
        {"ratelimit.service.call.should_rate_limit.service_error", 1},
    };
    EXPECT_EQ(moved(), expected);
}

}  // namespace
}  // namespace ratelimitd::stats
