// The quota service's heavy hitters (BucketTop): buckets ranked per rule by demand and by
// denials, a bounded rendering of client-shaped bucket ids, and a bound on what is kept however
// many distinct buckets are reported.
#include "ratelimitd/service/top_board.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace ratelimitd::service {
namespace {

using policy::RlqsBucketId;

TopOptions options_of(std::size_t k) {
    TopOptions o;
    o.k = k;
    return o;
}

TEST(BucketTop, BucketsAreRankedPerRuleByDemandAndByDenials) {
    TopBoard board(options_of(5));
    auto& top = board.buckets();
    top.record("web", "api", {{"tenant", "a"}}, 10, 0, 1000);
    top.record("web", "api", {{"tenant", "b"}}, 3, 20, 1000);
    top.record("web", "api", {{"tenant", "a"}}, 5, 1, 1000);
    top.record("web", "other", {{"kind", "x"}}, 1, 0, 1000);
    top.record("mobile", "api", {{"tenant", "a"}}, 7, 7, 1000);
    const auto demand = top.ranking(std::string("web"), std::nullopt, BucketBy::demand, 5);
    ASSERT_EQ(demand.size(), 2u);
    EXPECT_EQ(demand[0].rule, "api");
    ASSERT_EQ(demand[0].buckets.size(), 2u);
    EXPECT_EQ(demand[0].buckets[0], (RankedTenant{"tenant=b", 23, 0}));
    EXPECT_EQ(demand[0].buckets[1], (RankedTenant{"tenant=a", 16, 0}));
    EXPECT_EQ(demand[1].rule, "other");
    const auto denied = top.ranking(std::string("web"), std::string("api"), BucketBy::denied, 1);
    ASSERT_EQ(denied.size(), 1u);
    EXPECT_EQ(denied[0].buckets, (std::vector<RankedTenant>{{"tenant=b", 20, 0}}));
    EXPECT_EQ(top.ranking(std::nullopt, std::nullopt, BucketBy::demand, 5).size(), 3u);
}

TEST(BucketTop, AClientsFiguresAreCappedAndAQuietBucketIsNotKept) {
    TopBoard board(options_of(5));
    auto& top = board.buckets();
    const auto huge = std::numeric_limits<std::uint64_t>::max();
    top.record("web", "api", {{"tenant", "a"}}, huge, huge, 4'294'967'295);
    top.record("web", "api", {{"tenant", "quiet"}}, 0, 0, 4'294'967'295);
    const auto demand = top.ranking(std::string("web"), std::nullopt, BucketBy::demand, 5);
    ASSERT_EQ(demand.size(), 1u);
    EXPECT_EQ(demand[0].buckets, (std::vector<RankedTenant>{{"tenant=a", 2 * 4'294'967'295ULL, 0}}));
}

TEST(BucketTop, ARenderingIsTheSortedPairsCutAtABoundary) {
    EXPECT_EQ(BucketTop::render_bucket({{"kind", "api"}, {"tenant", "t-1"}}), "kind=api,tenant=t-1");
    // 16 pairs of a 128-byte key and a 256-byte value of two-byte characters: cut, never
    // inside a character, and marked.
    RlqsBucketId big;
    std::string accents;
    for (int j = 0; j < 128; ++j) accents += "\xC3\xA9";
    for (int i = 0; i < 16; ++i) big.emplace_back(std::string(127, 'k') + char('a' + i), accents);
    const auto rendering = BucketTop::render_bucket(big);
    EXPECT_LE(rendering.size(), BucketTop::max_rendering_bytes);
    EXPECT_EQ(rendering.substr(rendering.size() - 3), "...");
    RlqsBucketId accented{{"k", std::string(200, 'x')}};
    // 125 bytes are kept before "...": "k=" and 123 of the value, whose bytes 122 and 123 are
    // one two-byte character; it goes whole.
    accented[0].second.replace(122, 2, "\xC3\xA9");
    EXPECT_EQ(BucketTop::render_bucket(accented), "k=" + std::string(122, 'x') + "...");
}

// A client naming a new bucket in every report: what is kept stays within one rule's rings,
// and a bucket heavier than total / K is still ranked.
TEST(BucketTop, ManyDistinctBucketsKeepAtMostTheBound) {
    const std::size_t k = 8;
    TopBoard board(options_of(k));
    auto& top = board.buckets();
    for (int i = 0; i < 20'000; ++i) {
        top.record("web", "api", {{"tenant", "flood-" + std::to_string(i)}}, 1, 1, 1000);
        if (i % 10 == 0) top.record("web", "api", {{"tenant", "heavy"}}, 100, 0, 1000);
    }
    const TopOptions o = options_of(k);
    EXPECT_LE(top.kept(), o.slices * 2 * k);
    const auto demand = top.ranking(std::string("web"), std::string("api"), BucketBy::demand, k);
    ASSERT_EQ(demand.size(), 1u);
    ASSERT_FALSE(demand[0].buckets.empty());
    EXPECT_EQ(demand[0].buckets[0].tenant, "tenant=heavy");
    // 2,000 reports of 100: an upper bound, and a lower bound, of its true demand.
    EXPECT_GE(demand[0].buckets[0].count, 200'000u);
    EXPECT_LE(demand[0].buckets[0].count - demand[0].buckets[0].error, 200'000u);
    EXPECT_LE(demand[0].buckets.size(), k);
}

}  // namespace
}  // namespace ratelimitd::service
