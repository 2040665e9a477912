// The reconnect wait, as envoyproxy/ratelimit's (jpillora/backoff): initial * factor^attempt,
// jittered between initial and that, within [initial, max]; its default factor 0.5 never grows.
#include "ratelimitd/xds/backoff.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::xds {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, EnvoyRatelimitsDefaultsWaitTheInitialIntervalEveryTime) {
    Backoff b({.initial = milliseconds(10'000), .max = milliseconds(60'000), .factor = 0.5, .jitter = true},
              [] { return 0.99; });
    for (int i = 0; i < 10; ++i) EXPECT_EQ(b.next(), milliseconds(10'000)) << i;
}

TEST(Backoff, AFactorAboveOneGrowsUpToTheMax) {
    Backoff b({.initial = milliseconds(100), .max = milliseconds(1'000), .factor = 2, .jitter = false});
    EXPECT_EQ(b.next(), milliseconds(100));
    EXPECT_EQ(b.next(), milliseconds(200));
    EXPECT_EQ(b.next(), milliseconds(400));
    EXPECT_EQ(b.next(), milliseconds(800));
    EXPECT_EQ(b.next(), milliseconds(1'000));
    for (int i = 0; i < 200; ++i) EXPECT_EQ(b.next(), milliseconds(1'000)) << "never past max, never overflowing";
    b.reset();
    EXPECT_EQ(b.next(), milliseconds(100));
}

TEST(Backoff, JitterDrawsBetweenTheInitialAndTheGrownWait) {
    double draw = 0.0;
    Backoff b({.initial = milliseconds(100), .max = milliseconds(10'000), .factor = 2, .jitter = true},
              [&draw] { return draw; });
    (void)b.next();  // attempt 0: 100
    draw = 0.0;
    EXPECT_EQ(b.next(), milliseconds(100));  // attempt 1: [100, 200]
    draw = 0.5;
    EXPECT_EQ(b.next(), milliseconds(250));  // attempt 2: 100 + 0.5 * 300
}

TEST(Backoff, AZeroFactorDoublesAndAMaxBelowTheInitialWins) {
    Backoff doubling({.initial = milliseconds(10), .max = milliseconds(1'000), .factor = 0, .jitter = false});
    (void)doubling.next();
    EXPECT_EQ(doubling.next(), milliseconds(20));
    Backoff inverted({.initial = milliseconds(500), .max = milliseconds(100), .factor = 2, .jitter = false});
    EXPECT_EQ(inverted.next(), milliseconds(100));
}

}  // namespace
}  // namespace ratelimitd::xds
