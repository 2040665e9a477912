// The quota door's per-stream and per-connection state, without a server: PeerStreams' cap per
// connection and its release, IdleBuckets' quiet time (reset by a request, capped in how many
// buckets it tracks), and read_quota_report's clamping of time_elapsed.
#include "ratelimitd/grpc/idle_buckets.hpp"
#include "ratelimitd/grpc/peer_streams.hpp"
#include "ratelimitd/grpc/quota_report.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace ratelimitd::rls;
using namespace std::chrono_literals;

TEST(PeerStreams, EachConnectionHoldsAtMostItsCapAndAReleaseFreesAPlace) {
    PeerStreams peers(2);
    EXPECT_TRUE(peers.admit("ipv4:127.0.0.1:1"));
    EXPECT_TRUE(peers.admit("ipv4:127.0.0.1:1"));
    EXPECT_FALSE(peers.admit("ipv4:127.0.0.1:1"));
    EXPECT_TRUE(peers.admit("ipv4:127.0.0.1:2"));  // another connection
    peers.release("ipv4:127.0.0.1:1");
    EXPECT_TRUE(peers.admit("ipv4:127.0.0.1:1"));
    EXPECT_FALSE(peers.admit("ipv4:127.0.0.1:1"));
    peers.release("ipv4:127.0.0.1:9");  // never admitted: nothing to forget
    EXPECT_FALSE(peers.admit("ipv4:127.0.0.1:1"));
}

TEST(IdleBuckets, QuietTimeAddsUpUntilARequestAndTheBucketIsForgottenWhenIdle) {
    IdleBuckets idle;
    const ratelimitd::policy::RlqsBucketId a{{"k", "a"}};
    const ratelimitd::policy::RlqsBucketId b{{"k", "b"}};
    EXPECT_FALSE(idle.quiet_for(a, false, 6s, 10s));
    EXPECT_FALSE(idle.quiet_for(b, false, 9s, 10s));  // each bucket its own
    EXPECT_FALSE(idle.quiet_for(a, true, 6s, 10s));   // a request: back to 0
    EXPECT_FALSE(idle.quiet_for(a, false, 9'999ms, 10s));
    EXPECT_TRUE(idle.quiet_for(a, false, 1ms, 10s));
    EXPECT_FALSE(idle.quiet_for(a, false, 1ms, 10s));  // forgotten: afresh
    EXPECT_TRUE(idle.quiet_for(b, false, 1s, 10s));
}

TEST(IdleBuckets, PastMaxTrackedANewBucketIsNeverIdle) {
    IdleBuckets idle;
    for (std::size_t i = 0; i < IdleBuckets::max_tracked; ++i) {
        EXPECT_FALSE(idle.quiet_for({{"n", std::to_string(i)}}, false, 1s, 10s));
    }
    EXPECT_FALSE(idle.quiet_for({{"n", "one more"}}, false, 1h, 10s));
    EXPECT_TRUE(idle.quiet_for({{"n", "0"}}, false, 9s, 10s));  // a tracked one still is
}

TEST(QuotaReport, TimeElapsedIsClampedToZeroAndADay) {
    envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports wire;
    wire.set_domain("web");
    for (const auto& [seconds, nanos] : {std::pair<std::int64_t, std::int32_t>{-5, 0}, {1, 500'000'000}, {10'000'000, 0}}) {
        auto& usage = *wire.add_bucket_quota_usages();
        (*usage.mutable_bucket_id()->mutable_bucket())["k"] = "v";
        usage.mutable_time_elapsed()->set_seconds(seconds);
        usage.mutable_time_elapsed()->set_nanos(nanos);
    }
    const QuotaReport report = read_quota_report(wire, QuotaReportBounds{});
    ASSERT_EQ(report.buckets.size(), 3U);
    EXPECT_EQ(report.buckets[0].elapsed, 0ms);
    EXPECT_EQ(report.buckets[1].elapsed, 1'500ms);
    EXPECT_EQ(report.buckets[2].elapsed, 86'400'000ms);
}

}  // namespace
