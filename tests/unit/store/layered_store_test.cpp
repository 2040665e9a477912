// MemoryStore::decide_all: several limits as one decision, the same numbers as single checks,
// no charge on a denial, and no deadlock under concurrency.
#include "ratelimitd/store/memory/memory_store.hpp"

#include "support/manual_clock.hpp"

#include "unit/store/memory_policies.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace ratelimitd::store::memory {
namespace {

using ratelimitd::test::make_policy;

using policy::Algorithm;
using policy::Policy;
using ratelimitd::testing::ManualClock;

bool same(const check::WindowState& a, const check::WindowState& b) {
    return a.policy == b.policy && a.allowed == b.allowed && a.limit == b.limit && a.window_s == b.window_s &&
           a.remaining == b.remaining && a.reset_epoch_s == b.reset_epoch_s && a.reset_after_s == b.reset_after_s &&
           a.retry_after_s == b.retry_after_s;
}

std::string describe(const check::WindowState& w) {
    return w.policy + (w.allowed ? " allowed" : " denied") + " remaining=" + std::to_string(w.remaining) +
           " reset=" + std::to_string(w.reset_epoch_s) + " t=" + std::to_string(w.reset_after_s) +
           " retry=" + std::to_string(w.retry_after_s);
}

class Layered : public ::testing::Test {
protected:
    ManualClock clock;
    MemoryStore store{clock};
    MemoryStore twin{clock};  // the same checks one at a time, for the expected numbers
    const Policy tb = make_policy("tb", Algorithm::token_bucket, 3, 3000);
    const Policy sl = make_policy("sl", Algorithm::sliding_log, 2, 10000);
    const Policy fw = make_policy("fw", Algorithm::fixed_window, 5, 60000);

    check::Verdict layered(std::uint32_t cost = 1) {
        return store.decide_all({{&tb, "k:tb", cost}, {&sl, "k:sl", cost}, {&fw, "k:fw", cost}});
    }
};

TEST_F(Layered, AllAdmitChargesEachExactlyAsASingleCheckWould) {
    for (int i = 0; i < 2; ++i) {
        const auto v = layered();
        ASSERT_TRUE(v.allowed);
        ASSERT_EQ(v.windows.size(), 3u);
        const check::WindowState want[] = {twin.decide(tb, "k:tb", 1).windows[0], twin.decide(sl, "k:sl", 1).windows[0],
                                           twin.decide(fw, "k:fw", 1).windows[0]};
        for (int w = 0; w < 3; ++w) {
            EXPECT_TRUE(same(v.windows[w], want[w])) << describe(v.windows[w]) << " vs " << describe(want[w]);
        }
        clock.advance(400);
    }
}

TEST_F(Layered, ADenialChargesNoneOfTheOthers) {
    // The twin log sees the same checks at the same times, for the denied window's numbers.
    ASSERT_TRUE(layered().allowed);
    twin.decide(sl, "k:sl", 1);
    clock.advance(10);
    ASSERT_TRUE(layered().allowed);  // the sliding log (limit 2) is now full
    twin.decide(sl, "k:sl", 1);
    clock.advance(10);
    const auto tb_before = store.inspect(tb, "k:tb").windows[0];
    const auto fw_before = store.inspect(fw, "k:fw").windows[0];

    const auto v = layered();
    EXPECT_FALSE(v.allowed);
    ASSERT_EQ(v.windows.size(), 3u);
    EXPECT_TRUE(v.windows[0].allowed);   // would have admitted...
    EXPECT_FALSE(v.windows[1].allowed);  // ...but the sliding log denied
    EXPECT_TRUE(v.windows[2].allowed);
    EXPECT_EQ(&v.reported(), &v.windows[1]);
    // ...so nothing was charged: the others read as before, and report exactly that state.
    EXPECT_TRUE(same(store.inspect(tb, "k:tb").windows[0], tb_before));
    EXPECT_TRUE(same(store.inspect(fw, "k:fw").windows[0], fw_before));
    EXPECT_TRUE(same(v.windows[0], tb_before)) << describe(v.windows[0]) << " vs " << describe(tb_before);
    EXPECT_TRUE(same(v.windows[2], fw_before)) << describe(v.windows[2]) << " vs " << describe(fw_before);
    EXPECT_EQ(v.windows[2].remaining, 3);  // fw: 5 - 2 admitted

    // The denied window's numbers are a single check's.
    const auto want = twin.decide(sl, "k:sl", 1).windows[0];
    EXPECT_TRUE(same(v.windows[1], want)) << describe(v.windows[1]) << " vs " << describe(want);
    EXPECT_GE(v.windows[1].retry_after_s, 1);
}

TEST_F(Layered, CostIsCheckedPerLimit) {
    // cost 3: the bucket (3) and the window (5) fit, the log (2) cannot.
    const auto v = layered(3);
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(store.inspect(tb, "k:tb").windows[0].remaining, 3);
    EXPECT_EQ(store.inspect(fw, "k:fw").windows[0].remaining, 5);
    EXPECT_EQ(store.key_count(), 0u);  // a denial creates no key either
}

TEST(LayeredShards, KeysSharingAShardLockItOnce) {
    // 65 keys over 64 shards: at least two share one, which must not be locked twice.
    ManualClock clock;
    MemoryStore store(clock);
    const Policy p = make_policy("fw", Algorithm::fixed_window, 1, 60000);
    std::vector<LimitCheck> checks;
    for (int i = 0; i < 65; ++i) checks.push_back({&p, "k" + std::to_string(i), 1});
    EXPECT_TRUE(store.decide_all(checks).allowed);
    EXPECT_FALSE(store.decide_all(checks).allowed);
    EXPECT_EQ(store.key_count(), 65u);
}

TEST(LayeredConcurrency, OppositeOrdersNeitherDeadlockNorOverAdmit) {
    ManualClock clock;
    MemoryStore store(clock);
    const Policy shared = make_policy("shared", Algorithm::fixed_window, 500, 60000);
    const Policy own = make_policy("own", Algorithm::fixed_window, 1000000, 60000);
    std::atomic<int> admitted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            const std::string mine = "own:" + std::to_string(t);
            for (int i = 0; i < 200; ++i) {
                // Half the threads list the shared key first, half last.
                auto v = t % 2 == 0 ? store.decide_all({{&shared, "shared", 1}, {&own, mine, 1}})
                                    : store.decide_all({{&own, mine, 1}, {&shared, "shared", 1}});
                if (v.allowed) admitted.fetch_add(1);
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(admitted.load(), 500);
    // Each thread's own key was charged exactly as often as the shared one admitted it.
    std::int64_t own_total = 0;
    for (int t = 0; t < 8; ++t) own_total += 1000000 - store.inspect(own, "own:" + std::to_string(t)).windows[0].remaining;
    EXPECT_EQ(own_total, 500);
}

}  // namespace
}  // namespace ratelimitd::store::memory
