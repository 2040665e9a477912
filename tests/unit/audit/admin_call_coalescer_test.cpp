// AdminCallCoalescer: one entry per key and interval, the calls between counted on the next;
// a budget over all keys, the calls past it counted as unlogged; the keys held stay bounded.
#include "ratelimitd/audit/admin_call_coalescer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ratelimitd::audit {
namespace {

TEST(AdminCallCoalescer, TheFirstCallWritesAndTheRestOfItsIntervalIsCountedOnTheNext) {
    AdminCallCoalescer c({.interval = std::chrono::milliseconds(1000), .per_interval = 10});
    EXPECT_TRUE(c.note("a", 0).write);
    for (int i = 1; i <= 7; ++i) EXPECT_FALSE(c.note("a", i * 100).write);
    const auto next = c.note("a", 1000);
    EXPECT_TRUE(next.write);
    EXPECT_EQ(next.repeats, 7u);
    EXPECT_EQ(next.unlogged, 0u);
    EXPECT_TRUE(c.note("b", 1001).write) << "another key has its own interval";
}

TEST(AdminCallCoalescer, PastTheBudgetCallsAreOnlyCountedAndShowOnTheNextEntry) {
    AdminCallCoalescer c({.interval = std::chrono::milliseconds(1000), .per_interval = 2});
    EXPECT_TRUE(c.note("p1", 0).write);
    EXPECT_TRUE(c.note("p2", 1).write);
    for (int i = 3; i <= 7; ++i) EXPECT_FALSE(c.note("p" + std::to_string(i), i).write);
    const auto next = c.note("p9", 1000);
    EXPECT_TRUE(next.write);
    EXPECT_EQ(next.unlogged, 5u);
}

// A flood from ever new peers: at most per_interval entries per interval, and the keys held
// stay within twice that, however long it goes on.
TEST(AdminCallCoalescer, AFloodFromManyPeersWritesABoundedNumberOfEntriesAndHoldsFewKeys) {
    AdminCallCoalescer c({.interval = std::chrono::milliseconds(1000), .per_interval = 5});
    std::size_t written = 0, most_keys = 0;
    for (int i = 0; i < 100'000; ++i) {
        if (c.note("peer" + std::to_string(i), i / 10).write) ++written;  // 10 calls per ms, 10 s
        most_keys = std::max(most_keys, c.keys_held());
    }
    EXPECT_LE(written, 5u * 11);
    EXPECT_GE(written, 5u * 10);
    EXPECT_LE(most_keys, 2u * 5 + 1);
}

}  // namespace
}  // namespace ratelimitd::audit
