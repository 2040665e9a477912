// `max_delay:` and `delay:` in the registry (issue 50): the queue each gives the scripts, where
// they may stand, and the refusals, each naming the field and the algorithm.
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using ratelimitd::test::parse_error_of;
using ratelimitd::test::refusal;

using namespace ratelimitd::policy;
using namespace std::chrono_literals;

TEST(DelayConfig, MaxDelayAndDelayBecomeAQueueInScriptUnits) {
    const Config c = parse_config(R"(
policies:
  plain: {algorithm: token_bucket, limit: 10, window: 1s, burst: 5}
  smooth: {algorithm: token_bucket, limit: 10, window: 1s, burst: 5, max_delay: 10s}
  cell: {algorithm: gcra, limit: 600, window: 1m, max_delay: 2s}
  nginx: {algorithm: token_bucket, limit: 10, window: 1s, burst: 21, delay: 9}
plans:
  pro:
    smooth: {limit: 20, window: 1s, burst: 8}
)",
                                  "delay.yaml");
    const Policy& plain = *c.registry.find("plain");
    EXPECT_EQ(plain.queue_units, 0) << "no delay: the scripts are sent nothing more";
    const Policy& smooth = *c.registry.find("smooth");
    EXPECT_EQ(smooth.max_delay, 10s);
    EXPECT_EQ(smooth.queue_units, 10'000 * 10) << "10 s of refill at 10 units per ms";
    EXPECT_EQ(smooth.burst, 5);
    EXPECT_EQ(c.registry.find("cell")->queue_units, 2'000 * 600);
    // nginx `burst=20 delay=8`: 9 at once (8 excess + the one at the rate), 12 more queued.
    const Policy& nginx = *c.registry.find("nginx");
    EXPECT_EQ(nginx.burst, 9);
    EXPECT_EQ(nginx.delay_at_once, 9);
    EXPECT_EQ(nginx.queued_tokens, 12);
    EXPECT_EQ(nginx.queue_units, 12 * 1000);
    const Policy& pro = c.registry.plans.at("pro").policies.at("smooth");
    EXPECT_EQ(pro.queue_units, 10'000 * 20) << "the plan's own rate fills the same 10 s";
}

TEST(DelayConfig, RefusalsNameTheFieldAndTheAlgorithm) {
    const auto error_of = [](const std::string& policy) {
        return parse_error_of("policies:\n  p: " + policy + "\n", "delay.yaml");
    };
    const std::string fixed = error_of("{algorithm: fixed_window, limit: 5, window: 1m, max_delay: 2s}");
    EXPECT_NE(fixed.find("policies.p.max_delay: not allowed with algorithm fixed_window"), std::string::npos) << fixed;
    const std::string sliding = error_of("{algorithm: sliding_window, limit: 5, window: 1m, delay: 2}");
    EXPECT_NE(sliding.find("policies.p.delay: not allowed with algorithm sliding_window"), std::string::npos)
        << sliding;
    const std::string lease = error_of("{algorithm: concurrency, limit: 5, lease: 30s, max_delay: 1s}");
    EXPECT_NE(lease.find("policies.p.max_delay: not allowed with algorithm concurrency"), std::string::npos) << lease;
    const std::string both = error_of("{algorithm: gcra, limit: 5, window: 1s, burst: 5, delay: 2, max_delay: 1s}");
    EXPECT_NE(both.find("policies.p.delay: not allowed with max_delay"), std::string::npos) << both;
    const std::string too_long = error_of("{algorithm: gcra, limit: 5, window: 1s, max_delay: 2h}");
    EXPECT_NE(too_long.find("policies.p.max_delay: expected a duration 1ms..1h"), std::string::npos) << too_long;
    const std::string whole = error_of("{algorithm: token_bucket, limit: 5, window: 1s, burst: 5, delay: 5}");
    EXPECT_NE(whole.find("policies.p.delay"), std::string::npos) << "delay must leave part of the burst queued";
    const std::string no_burst = error_of("{algorithm: token_bucket, limit: 5, window: 1s, delay: 2}");
    EXPECT_NE(no_burst.find("policies.p.delay: needs a burst of 2 or more"), std::string::npos) << no_burst;
    const std::string windows = error_of(
        "{algorithm: token_bucket, max_delay: 1s, windows: [{limit: 5, window: 1s}, {limit: 50, window: 1m}]}");
    EXPECT_NE(windows.find("policies.p.max_delay: not allowed with windows"), std::string::npos) << windows;
    const std::string huge = error_of("{algorithm: token_bucket, limit: 1000000000, window: 2h, max_delay: 1h}");
    EXPECT_NE(huge.find("too large"), std::string::npos) << huge;
}

// max_held bounds the answers a delay makes /v1/auth hold: read beside max_delay or delay,
// refused alone (it would bound nothing) and outside 1..1,000,000.
TEST(DelayConfig, MaxHeldStandsBesideADelayWithinItsBounds) {
    const Config c = parse_config(R"(
policies:
  capped: {algorithm: gcra, limit: 10, window: 1s, burst: 1, max_delay: 2s, max_held: 3}
  nginx: {algorithm: token_bucket, limit: 10, window: 1s, burst: 21, delay: 9, max_held: 1000000}
  smooth: {algorithm: gcra, limit: 10, window: 1s, burst: 1, max_delay: 2s}
)",
                                  "delay.yaml");
    EXPECT_EQ(c.registry.find("capped")->max_held, 3);
    EXPECT_EQ(c.registry.find("nginx")->max_held, 1'000'000);
    EXPECT_FALSE(c.registry.find("smooth")->max_held.has_value()) << "absent: only the process bound";
    const auto error_of = [](const std::string& policy) {
        return parse_error_of("policies:\n  p: " + policy + "\n", "delay.yaml");
    };
    const std::string alone = error_of("{algorithm: gcra, limit: 10, window: 1s, max_held: 3}");
    EXPECT_NE(alone.find("policies.p.max_held: needs max_delay or delay"), std::string::npos) << alone;
    const std::string zero = error_of("{algorithm: gcra, limit: 10, window: 1s, max_delay: 1s, max_held: 0}");
    EXPECT_NE(zero.find("policies.p.max_held"), std::string::npos) << zero;
    const std::string huge = error_of("{algorithm: gcra, limit: 10, window: 1s, max_delay: 1s, max_held: 1000001}");
    EXPECT_NE(huge.find("policies.p.max_held"), std::string::npos) << huge;
    const std::string text = error_of("{algorithm: gcra, limit: 10, window: 1s, max_delay: 1s, max_held: many}");
    EXPECT_NE(text.find("policies.p.max_held"), std::string::npos) << text;
}

// gRPC (Envoy RLS) cannot say "wait": its rules take no delay, so an RLS call is never held
// or answered with a reservation (docs/policies.md).
TEST(DelayConfig, EnvoyDomainRulesTakeNoDelay) {
    const std::string r = refusal(
        "domains:\n  - domain: d\n    descriptors:\n      - {key: k, algorithm: gcra, max_delay: 2s, "
        "rate_limit: {unit: second, requests_per_unit: 10}}\n");
    EXPECT_NE(r.find("domains[0].descriptors[0].max_delay: unknown key"), std::string::npos) << r;
}

}  // namespace
