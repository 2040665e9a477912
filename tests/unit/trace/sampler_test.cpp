// Sampler: OTEL_TRACES_SAMPLER's names, the parent's flag followed, the ratio rule at its exact
// boundary, and the ratio over 10,000 random roots within binomial bounds.
#include "ratelimitd/trace/sampler.hpp"

#include "ratelimitd/trace/id_generator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace {

using ratelimitd::trace::Sampler;
using ratelimitd::trace::SpanContext;
using ratelimitd::trace::TraceId;

TraceId with_low_bytes(std::uint64_t low) {
    TraceId id{};
    id[0] = 0x01;
    for (int i = 0; i < 8; ++i) id[15 - i] = static_cast<std::uint8_t>(low >> (8 * i));
    return id;
}

TEST(Sampler, KnowsTheSixStandardNames) {
    EXPECT_EQ(Sampler::named("always_on", 0.1)->ratio(), 1.0);
    EXPECT_EQ(Sampler::named("always_off", 0.1)->ratio(), 0.0);
    EXPECT_EQ(Sampler::named("traceidratio", 0.1)->ratio(), 0.1);
    EXPECT_FALSE(Sampler::named("traceidratio", 0.1)->parent_based());
    EXPECT_TRUE(Sampler::named("parentbased_always_on", 0.1)->parent_based());
    EXPECT_EQ(Sampler::named("parentbased_always_off", 0.1)->ratio(), 0.0);
    EXPECT_EQ(Sampler::named("parentbased_traceidratio", 0.25)->ratio(), 0.25);
    EXPECT_FALSE(Sampler::named("jaeger_remote", 1.0).has_value());
    EXPECT_FALSE(Sampler::named("parentbased_", 1.0).has_value());
}

TEST(Sampler, ClampsTheRatio) {
    EXPECT_EQ(Sampler::parent_based_ratio(7.0).ratio(), 1.0);
    EXPECT_EQ(Sampler::parent_based_ratio(-1.0).ratio(), 0.0);
    EXPECT_EQ(Sampler::parent_based_ratio(std::nan("")).ratio(), 0.0);
}

TEST(Sampler, AParentBasedSamplerFollowsTheParentsFlag) {
    const auto never = Sampler::parent_based_ratio(0.0);
    const auto always = Sampler::parent_based_ratio(1.0);
    SpanContext sampled_parent;
    sampled_parent.flags = 0x01;
    SpanContext unsampled_parent;
    const auto id = with_low_bytes(0);
    EXPECT_TRUE(never.should_sample(id, &sampled_parent));
    EXPECT_FALSE(always.should_sample(id, &unsampled_parent));
    EXPECT_FALSE(never.should_sample(id, nullptr));
    EXPECT_TRUE(always.should_sample(id, nullptr));
    EXPECT_FALSE(Sampler::named("traceidratio", 0.0)->should_sample(id, &sampled_parent))
        << "a sampler that is not parent based ignores the parent";
}

TEST(Sampler, TheRatioBoundIsExact) {
    const auto half = Sampler::parent_based_ratio(0.5);  // bound 2^62
    EXPECT_TRUE(half.should_sample(with_low_bytes(0x7fffffffffffffffULL), nullptr));  // >>1 = 2^62 - 1
    EXPECT_FALSE(half.should_sample(with_low_bytes(0x8000000000000000ULL), nullptr));  // >>1 = 2^62
    const auto all = Sampler::parent_based_ratio(1.0);
    EXPECT_TRUE(all.should_sample(with_low_bytes(~0ULL), nullptr));
}

TEST(Sampler, TenThousandRootsAtAQuarterFallWithinBinomialBounds) {
    constexpr int checks = 10'000;
    constexpr double ratio = 0.25;
    const auto sampler = Sampler::parent_based_ratio(ratio);
    std::mt19937_64 ids(53);  // fixed: the same ids every run
    int sampled = 0;
    for (int i = 0; i < checks; ++i) {
        TraceId id{};
        const std::uint64_t high = ids(), low = ids();
        std::memcpy(id.data(), &high, 8);
        std::memcpy(id.data() + 8, &low, 8);
        sampled += sampler.should_sample(id, nullptr) ? 1 : 0;
    }
    // Mean 2,500, standard deviation sqrt(n p (1 - p)) = 43.3: five of them either side.
    const double sigma = std::sqrt(checks * ratio * (1 - ratio));
    EXPECT_NEAR(sampled, checks * ratio, 5 * sigma) << sampled;
}

}  // namespace

namespace {

// Tracer decides a root from one draw before drawing the rest of its id: that decision must be
// the one should_sample makes on the whole id, and the id must end with the draw.
TEST(Sampler, ARootsDecisionFromItsLowHalfIsTheWholeIdsDecision) {
    const auto sampler = Sampler::parent_based_ratio(0.25);
    const std::uint64_t bound = std::uint64_t{1} << 61;  // 0.25 * 2^63
    for (const std::uint64_t low : {std::uint64_t{0}, 2 * bound - 2, 2 * bound - 1, 2 * bound, ~std::uint64_t{0}}) {
        const TraceId id = ratelimitd::trace::trace_id_ending_with(low);
        EXPECT_EQ(sampler.should_sample_root(low), sampler.should_sample(id, nullptr)) << low;
        EXPECT_EQ(sampler.should_sample_root(low), low < 2 * bound) << low;
        for (int i = 0; i < 8; ++i) {
            EXPECT_EQ(id[15 - i], static_cast<std::uint8_t>(low >> (8 * i))) << "the last 8 bytes are the draw";
        }
        EXPECT_FALSE(ratelimitd::trace::is_zero(id));
    }
}

}  // namespace
