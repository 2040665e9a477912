// CircuitBreaker: opens after repeated failures, doubles its probe interval, closes on success.
#include "ratelimitd/store/redis/circuit_breaker.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::store::redis {
namespace {

using namespace std::chrono_literals;

TEST(CircuitBreaker, OpensAfterTheThresholdOfFailuresInARow) {
    CircuitBreaker b({3, 100ms, 400ms});
    EXPECT_FALSE(b.on_failure());
    EXPECT_FALSE(b.on_failure());
    EXPECT_TRUE(b.allow());
    EXPECT_TRUE(b.on_failure());
    EXPECT_FALSE(b.allow());
    EXPECT_EQ(b.retry_interval(), 100ms);
}

TEST(CircuitBreaker, ASuccessResetsTheFailureCount) {
    CircuitBreaker b({3, 100ms, 400ms});
    b.on_failure();
    b.on_failure();
    EXPECT_FALSE(b.on_success());
    b.on_failure();
    b.on_failure();
    EXPECT_TRUE(b.allow());
}

TEST(CircuitBreaker, FailedProbesDoubleTheIntervalUpToTheMaximum) {
    CircuitBreaker b({1, 100ms, 400ms});
    ASSERT_TRUE(b.on_failure());
    b.on_failure();
    EXPECT_EQ(b.retry_interval(), 200ms);
    b.on_failure();
    EXPECT_EQ(b.retry_interval(), 400ms);
    b.on_failure();
    EXPECT_EQ(b.retry_interval(), 400ms);
}

TEST(CircuitBreaker, ASuccessfulProbeClosesItAndResetsTheInterval) {
    CircuitBreaker b({1, 100ms, 400ms});
    b.on_failure();
    b.on_failure();
    EXPECT_TRUE(b.on_success());
    EXPECT_TRUE(b.allow());
    EXPECT_TRUE(b.on_failure());
    EXPECT_EQ(b.retry_interval(), 100ms);
}

}  // namespace
}  // namespace ratelimitd::store::redis
