#include "ratelimitd/core/awaitable_frames.hpp"

#include "ratelimitd/core/frame_pool.hpp"

namespace ratelimitd::awaitable_frames {
namespace {

// Constant-initialized and trivially destructible: reached on every frame without a guard.
constinit thread_local FramePool pool;

/// Closes the thread's pool when the thread ends (its blocks go back to malloc). Built on the
/// first block the pool keeps, so a thread that never frees a frame never registers one.
class PoolCloser {
public:
    PoolCloser() = default;
    PoolCloser(const PoolCloser&) = delete;
    PoolCloser& operator=(const PoolCloser&) = delete;
    ~PoolCloser() { pool.close(); }
    void arm() const {}
};

constinit thread_local bool closer_armed = false;

}  // namespace

// Pooled under AddressSanitizer too, as Asio's own cache was: the sanitized build's
// allocation ceilings (tests/perf) count the same frames as the Release build's.
void* take(std::size_t size, std::size_t align) {
    return pool.allocate(size, align);
}

void give_back(void* block, std::size_t size) noexcept {
    if (!closer_armed) {
        closer_armed = true;
        static thread_local PoolCloser closer;
        closer.arm();
    }
    pool.release(block, size);
}

const FramePool& this_thread_pool() {
    return pool;
}

}  // namespace ratelimitd::awaitable_frames
