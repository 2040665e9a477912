// DenialCache: which denials it keeps, how it ages them, and that a reset forgets them.
#include "ratelimitd/store/denial_cache.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::store {
namespace {

using namespace std::chrono_literals;
using clock = DenialCache::clock;

check::Verdict denied(std::int64_t remaining, std::int64_t reset_after_ms) {
    check::WindowState w;
    w.policy = "p";
    w.allowed = false;
    w.limit = 5;
    w.window_s = 60;
    w.remaining = remaining;
    w.reset_epoch_s = 1'800'000'000;
    w.reset_after_ms = reset_after_ms;
    w.reset_after_s = (reset_after_ms + 999) / 1000;
    w.retry_after_s = std::max<std::int64_t>(1, w.reset_after_s);
    check::Verdict v;
    v.allowed = false;
    v.windows.push_back(w);
    return v;
}

TEST(DenialCache, DeniesUntilTheResetCountedFromWhenTheCommandWasSent) {
    DenialCache cache;
    const auto sent = clock::now();
    cache.remember("k", 1, denied(0, 2500), sent);
    auto hit = cache.lookup("k", sent + 1000ms);
    ASSERT_TRUE(hit.has_value());
    EXPECT_FALSE(hit->allowed);
    EXPECT_EQ(hit->windows[0].remaining, 0);
    EXPECT_EQ(hit->windows[0].retry_after_s, 2) << "1.5 s left, rounded up";
    EXPECT_EQ(hit->windows[0].reset_after_s, 2);
    EXPECT_EQ(hit->windows[0].reset_epoch_s, 1'800'000'000);
    EXPECT_TRUE(cache.lookup("k", sent + 2499ms).has_value());
    EXPECT_FALSE(cache.lookup("k", sent + 2500ms).has_value()) << "at T the store decides again";
    EXPECT_EQ(cache.hits(), 2u);
}

TEST(DenialCache, KeepsOnlyCostOneDenialsWithNothingLeft) {
    DenialCache cache;
    const auto sent = clock::now();
    cache.remember("cost3", 3, denied(0, 5000), sent);
    cache.remember("units-left", 1, denied(2, 5000), sent);
    auto allowed = denied(0, 5000);
    allowed.allowed = allowed.windows[0].allowed = true;
    cache.remember("allowed", 1, allowed, sent);
    EXPECT_FALSE(cache.lookup("cost3", sent).has_value());
    EXPECT_FALSE(cache.lookup("units-left", sent).has_value());
    EXPECT_FALSE(cache.lookup("allowed", sent).has_value());
}

TEST(DenialCache, ForgetDropsTheEntry) {
    DenialCache cache;
    const auto sent = clock::now();
    cache.remember("k", 1, denied(0, 60'000), sent);
    ASSERT_TRUE(cache.lookup("k", sent).has_value());
    cache.forget("k");
    EXPECT_FALSE(cache.lookup("k", sent).has_value());
}

TEST(DenialCache, StaysBoundedUnderAFloodOfKeys) {
    DenialCache cache(1600);  // 100 per shard
    const auto sent = clock::now();
    for (int i = 0; i < 100'000; ++i) cache.remember("k" + std::to_string(i), 1, denied(0, 60'000), sent);
    int live = 0;
    for (int i = 0; i < 100'000; ++i) live += cache.lookup("k" + std::to_string(i), sent).has_value();
    EXPECT_LE(live, 1600 + 16);
    EXPECT_GT(live, 0);
}

}  // namespace
}  // namespace ratelimitd::store

namespace ratelimitd::store {
namespace {

TEST(DenialCache, ClearDropsEverythingAfterTheStoreMayHaveLostState) {
    DenialCache cache;
    const auto sent = clock::now();
    cache.remember("a", 1, denied(0, 60'000), sent);
    cache.remember("b", 1, denied(0, 60'000), sent);
    cache.clear();
    EXPECT_FALSE(cache.lookup("a", sent).has_value());
    EXPECT_FALSE(cache.lookup("b", sent).has_value());
}

}  // namespace
}  // namespace ratelimitd::store
