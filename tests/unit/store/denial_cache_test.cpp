// DenialCache: which denials it keeps, how it ages them, and that a reset forgets them.
#include "ratelimitd/store/denial_cache.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::store {
namespace {

using namespace std::chrono_literals;
using clock = DenialCache::clock;

const DenialCache::PolicyNumbers numbers{policy::Algorithm::fixed_window, 5, 60'000, 5, false};

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
    cache.remember("k", numbers, 1, denied(0, 2500), sent, cache.generation());
    auto hit = cache.lookup("k", numbers, sent + 1000ms);
    ASSERT_TRUE(hit.has_value());
    EXPECT_FALSE(hit->allowed);
    EXPECT_EQ(hit->windows[0].remaining, 0);
    EXPECT_EQ(hit->windows[0].retry_after_s, 2) << "1.5 s left, rounded up";
    EXPECT_EQ(hit->windows[0].reset_after_s, 2);
    EXPECT_EQ(hit->windows[0].reset_epoch_s, 1'800'000'000);
    // The store's clock counts whole milliseconds: its instant may be up to 1 ms before `sent`,
    // so its reset up to 1 ms before sent + 2500 ms. The cache lets go a millisecond early.
    EXPECT_TRUE(cache.lookup("k", numbers, sent + 2498ms).has_value());
    EXPECT_FALSE(cache.lookup("k", numbers, sent + 2499ms).has_value()) << "at T the store decides again";
    EXPECT_EQ(cache.hits(), 2u);
}

TEST(DenialCache, KeepsOnlyCostOneDenialsWithNothingLeft) {
    DenialCache cache;
    const auto sent = clock::now();
    cache.remember("cost3", numbers, 3, denied(0, 5000), sent, cache.generation());
    cache.remember("units-left", numbers, 1, denied(2, 5000), sent, cache.generation());
    auto allowed = denied(0, 5000);
    allowed.allowed = allowed.windows[0].allowed = true;
    cache.remember("allowed", numbers, 1, allowed, sent, cache.generation());
    EXPECT_FALSE(cache.lookup("cost3", numbers, sent).has_value());
    EXPECT_FALSE(cache.lookup("units-left", numbers, sent).has_value());
    EXPECT_FALSE(cache.lookup("allowed", numbers, sent).has_value());
}

TEST(DenialCache, ForgetDropsTheEntry) {
    DenialCache cache;
    const auto sent = clock::now();
    cache.remember("k", numbers, 1, denied(0, 60'000), sent, cache.generation());
    ASSERT_TRUE(cache.lookup("k", numbers, sent).has_value());
    cache.forget("k");
    EXPECT_FALSE(cache.lookup("k", numbers, sent).has_value());
}

TEST(DenialCache, StaysBoundedUnderAFloodOfKeys) {
    DenialCache cache(1600);  // 100 per shard
    const auto sent = clock::now();
    for (int i = 0; i < 100'000; ++i) cache.remember("k" + std::to_string(i), numbers, 1, denied(0, 60'000), sent, cache.generation());
    int live = 0;
    for (int i = 0; i < 100'000; ++i) live += cache.lookup("k" + std::to_string(i), numbers, sent).has_value();
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
    cache.remember("a", numbers, 1, denied(0, 60'000), sent, cache.generation());
    cache.remember("b", numbers, 1, denied(0, 60'000), sent, cache.generation());
    cache.clear();
    EXPECT_FALSE(cache.lookup("a", numbers, sent).has_value());
    EXPECT_FALSE(cache.lookup("b", numbers, sent).has_value());
}

TEST(DenialCache, ADenialDecidedUnderOtherPolicyNumbersIsDropped) {
    DenialCache cache;
    const auto sent = clock::now();
    cache.remember("k", numbers, 1, denied(0, 60'000), sent, cache.generation());
    auto raised = numbers;
    raised.limit = 10;
    EXPECT_FALSE(cache.lookup("k", raised, sent).has_value()) << "a reload raised the limit: ask the store";
    EXPECT_FALSE(cache.lookup("k", numbers, sent).has_value()) << "and the old entry is gone";
    for (auto change : {+[](DenialCache::PolicyNumbers& n) { n.window_ms = 1000; },
                        +[](DenialCache::PolicyNumbers& n) { n.burst = 9; },
                        +[](DenialCache::PolicyNumbers& n) { n.algorithm = policy::Algorithm::gcra; },
                        +[](DenialCache::PolicyNumbers& n) { n.long_ttl = true; }}) {
        cache.remember("k", numbers, 1, denied(0, 60'000), sent, cache.generation());
        auto other = numbers;
        change(other);
        EXPECT_FALSE(cache.lookup("k", other, sent).has_value());
    }
}

TEST(DenialCache, AReplyToACheckThatStartedBeforeAResetIsNotKept) {
    DenialCache cache;
    const auto sent = clock::now();
    const auto started_in = cache.generation();
    cache.forget("k");  // the reset happens while the check is in flight
    cache.remember("k", numbers, 1, denied(0, 60'000), sent, started_in);
    EXPECT_FALSE(cache.lookup("k", numbers, sent).has_value());
    const auto before_clear = cache.generation();
    cache.clear();
    cache.remember("k", numbers, 1, denied(0, 60'000), sent, before_clear);
    EXPECT_FALSE(cache.lookup("k", numbers, sent).has_value());
    cache.remember("k", numbers, 1, denied(0, 60'000), sent, cache.generation());
    EXPECT_TRUE(cache.lookup("k", numbers, sent).has_value()) << "a check started after the reset is kept";
}

}  // namespace
}  // namespace ratelimitd::store
