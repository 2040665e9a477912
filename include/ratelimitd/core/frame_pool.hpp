// Coroutine frames from per-thread size-class free lists (issue 49).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace ratelimitd {

/// Keeps freed blocks by size class (64-byte steps up to 4 KiB) in singly linked free lists
/// and hands them out again: taking or returning one is a few instructions whatever the number
/// of blocks kept. Asio 1.81's own cache for awaitable frames is a fixed array scanned slot by
/// slot: at 32 Redis checks in flight (about ten frames each) it was full, and 5.8 of a check's
/// 7.3 allocations were frames going back to malloc. A block freed on another thread than the
/// one that took it is simply kept by that thread: every block is its own malloc'd piece.
///
/// The bytes kept are bounded (`kept_bytes_bound`, per pool): past it a freed block goes back
/// to malloc, so a burst of connections does not pin its frames' memory forever.
///
/// Trivially destructible on purpose: the per-thread pool (core/awaitable_frames.hpp) is a
/// constinit thread_local, reached without a guard; its owner calls close() at thread exit.
class FramePool {
public:
    static constexpr std::size_t granule = 64;
    static constexpr std::size_t classes = 64;  // blocks up to 4 KiB; larger ones are malloc's
    static constexpr std::size_t kept_bytes_bound = std::size_t{2} << 20;

    constexpr FramePool() = default;
    FramePool(const FramePool&) = delete;
    FramePool& operator=(const FramePool&) = delete;

    /// A block of at least `size` bytes aligned to `align` (at most alignof(max_align_t) is
    /// served from the lists; a larger alignment goes to aligned_alloc).
    void* allocate(std::size_t size, std::size_t align);

    /// Takes back a block `allocate` gave for the same `size` (any pool's, any thread's).
    void release(void* block, std::size_t size) noexcept;

    /// Frees every block kept.
    void drain() noexcept;

    /// Frees every block kept and keeps none from now on (a frame freed while the thread's
    /// other thread_locals are destroyed still goes back to malloc).
    void close() noexcept {
        drain();
        closed_ = true;
    }

    std::uint64_t fresh() const { return fresh_; }    ///< blocks taken from malloc
    std::uint64_t reused() const { return reused_; }  ///< blocks taken from a list
    std::size_t kept_bytes() const { return kept_bytes_; }

private:
    struct FreeBlock {
        FreeBlock* next;
    };

    std::array<FreeBlock*, classes> heads_{};
    std::size_t kept_bytes_ = 0;
    std::uint64_t fresh_ = 0;
    std::uint64_t reused_ = 0;
    bool closed_ = false;
};

}  // namespace ratelimitd
