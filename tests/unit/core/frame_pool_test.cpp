// FramePool: a freed block comes back for a size of its class, classes do not mix, the bytes
// kept stay under the bound, and a closed pool keeps nothing. Then the Asio hook: awaitable
// frames of a nested coroutine chain, 32 chains in flight at once, come from this thread's
// pool and, from the second round on, never from malloc.
#include "ratelimitd/core/awaitable_frames.hpp"
#include "ratelimitd/core/frame_pool.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using ratelimitd::FramePool;

TEST(FramePool, AFreedBlockIsHandedOutAgainForASizeOfItsClass) {
    FramePool pool;
    void* first = pool.allocate(100, alignof(std::max_align_t));
    pool.release(first, 100);
    EXPECT_EQ(pool.kept_bytes(), 128u) << "100 bytes are the 65-128 class";
    void* again = pool.allocate(120, alignof(std::max_align_t));
    EXPECT_EQ(again, first);
    EXPECT_EQ(pool.fresh(), 1u);
    EXPECT_EQ(pool.reused(), 1u);
    EXPECT_EQ(pool.kept_bytes(), 0u);
    pool.release(again, 120);
    pool.drain();
    EXPECT_EQ(pool.kept_bytes(), 0u);
}

TEST(FramePool, ClassesDoNotMix) {
    FramePool pool;
    void* small = pool.allocate(64, alignof(std::max_align_t));
    pool.release(small, 64);
    void* larger = pool.allocate(65, alignof(std::max_align_t));
    EXPECT_NE(larger, small);
    EXPECT_EQ(pool.fresh(), 2u);
    EXPECT_EQ(pool.reused(), 0u);
    pool.release(larger, 65);
    EXPECT_EQ(pool.kept_bytes(), 64u + 128u);
    pool.drain();
}

TEST(FramePool, TheBytesKeptStopAtTheBound) {
    FramePool pool;
    constexpr std::size_t block = 4096;
    constexpr std::size_t fit = FramePool::kept_bytes_bound / block;
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < fit + 10; ++i) blocks.push_back(pool.allocate(block, alignof(std::max_align_t)));
    for (void* b : blocks) pool.release(b, block);
    EXPECT_EQ(pool.kept_bytes(), fit * block) << "the ten past the bound went back to malloc";
    pool.drain();
}

TEST(FramePool, ABlockLargerThanTheLargestClassIsNeverKept) {
    FramePool pool;
    void* big = pool.allocate(4097, alignof(std::max_align_t));
    pool.release(big, 4097);
    EXPECT_EQ(pool.kept_bytes(), 0u);
    EXPECT_EQ(pool.fresh(), 0u) << "counted as malloc's, not the pool's";
}

TEST(FramePool, AClosedPoolKeepsNothing) {
    FramePool pool;
    void* kept = pool.allocate(200, alignof(std::max_align_t));
    void* later = pool.allocate(200, alignof(std::max_align_t));
    pool.release(kept, 200);
    pool.close();
    EXPECT_EQ(pool.kept_bytes(), 0u);
    pool.release(later, 200);
    EXPECT_EQ(pool.kept_bytes(), 0u);
}

TEST(FramePool, AnOverAlignedBlockHasItsAlignmentAndItsClassSize) {
    FramePool pool;
    void* b = pool.allocate(70, 256);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 256, 0u);
    pool.release(b, 70);
    void* again = pool.allocate(128, alignof(std::max_align_t));
    EXPECT_EQ(again, b) << "kept in its class (65-128), as large as the class";
    pool.release(again, 128);
    pool.drain();
}

boost::asio::awaitable<int> leaf(int v) {
    co_await boost::asio::post(boost::asio::use_awaitable);  // suspends: every frame is live at once
    co_return v + 1;
}

boost::asio::awaitable<int> middle(int v) {
    co_return co_await leaf(v) + 1;
}

boost::asio::awaitable<void> chain(int v, int& sum) {
    sum += co_await middle(v);
}

/// Runs 32 chains at once (each three frames deep, plus co_spawn's own) on `ioc`.
int run_round(boost::asio::io_context& ioc) {
    int sum = 0;
    for (int i = 0; i < 32; ++i) boost::asio::co_spawn(ioc, chain(i, sum), boost::asio::detached);
    ioc.restart();
    ioc.run();
    return sum;
}

TEST(AwaitableFrames, ChainsInFlightTogetherTakeNoFreshBlockAfterTheFirstRound) {
    const FramePool& pool = ratelimitd::awaitable_frames::this_thread_pool();
    boost::asio::io_context ioc;
    EXPECT_EQ(run_round(ioc), 32 * 31 / 2 + 32 * 2);
    const std::uint64_t fresh = pool.fresh();
    const std::uint64_t reused = pool.reused();
    EXPECT_GE(fresh, 32u * 3) << "at least three frames per chain came from the pool";
    EXPECT_EQ(run_round(ioc), 32 * 31 / 2 + 32 * 2);
    EXPECT_EQ(pool.fresh(), fresh) << "the second round's frames were all kept ones";
    EXPECT_GE(pool.reused() - reused, 32u * 3);
}

}  // namespace
