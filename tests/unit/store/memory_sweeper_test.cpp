// MemorySweeper: drops expired keys of the embedded store from a timer, and stops cleanly.
#include "ratelimitd/store/memory/memory_sweeper.hpp"

#include "support/manual_clock.hpp"
#include "support/run_until.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

namespace ratelimitd::store::memory {
namespace {

using ratelimitd::test::run_until;

using namespace std::chrono_literals;
using ratelimitd::testing::ManualClock;

policy::Policy fixed_window_policy() {
    policy::Policy p;
    p.name = "fw";
    p.algorithm = policy::Algorithm::fixed_window;
    p.limit = 5;
    p.window = 1'000ms;
    p.burst = 5;
    return p;
}

class MemorySweeperTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto p = fixed_window_policy();
        for (int i = 0; i < 100; ++i) ASSERT_TRUE(store_.decide(p, "k" + std::to_string(i), 1).allowed);
    }

    ManualClock clock_;
    MemoryStore store_{clock_};
    boost::asio::io_context io_;
};

TEST_F(MemorySweeperTest, DropsExpiredKeysThatNoCheckVisits) {
    MemorySweeper sweeper(io_.get_executor(), store_, 5ms);
    sweeper.start();
    // Live keys survive sweeps: let several intervals pass with the clock still.
    io_.run_for(50ms);
    EXPECT_EQ(store_.key_count(), 100u);
    // No check runs from here on: only the sweeper can drop them.
    clock_.advance(1'001);
    EXPECT_TRUE(run_until(io_, [&] { return store_.key_count() == 0; }, 10s)) << store_.key_count() << " keys left";
}

TEST_F(MemorySweeperTest, StopEndsTheLoopAndNoSweepFollows) {
    MemorySweeper sweeper(io_.get_executor(), store_, 5ms);
    sweeper.start();
    clock_.advance(1'001);
    sweeper.stop();
    // The io_context runs out of work only once the timer loop has ended.
    io_.run_for(10s);
    EXPECT_TRUE(io_.stopped()) << "the timer loop still runs after stop()";
    EXPECT_EQ(store_.key_count(), 100u) << "a sweep ran after stop()";
}

TEST_F(MemorySweeperTest, DestroyedWhileItsWaitIsQueued) {
    {
        MemorySweeper sweeper(io_.get_executor(), store_, 5ms);
        sweeper.start();
        io_.poll();  // the loop is now waiting on its timer
    }
    clock_.advance(1'001);
    // The cancelled wait completes after the sweeper is gone, touches nothing, and the loop ends.
    io_.run_for(10s);
    EXPECT_TRUE(io_.stopped());
    EXPECT_EQ(store_.key_count(), 100u);
}

}  // namespace
}  // namespace ratelimitd::store::memory
