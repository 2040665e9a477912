// Asio's awaitable frames taken from this thread's FramePool (issue 49). Every C++ file of
// every target that links rl_boost is compiled with this header forced in first (CMakeLists.txt):
// the two explicit specializations below replace Asio 1.81's recycling cache for
// awaitable_frame_tag, the only purpose whose blocks are coroutine frames, and a file that
// did not see them would allocate a frame one way and free it the other.
#pragma once

#include <boost/asio/detail/thread_info_base.hpp>

#include <cstddef>

namespace ratelimitd {

class FramePool;

namespace awaitable_frames {

/// A frame's block from this thread's pool.
void* take(std::size_t size, std::size_t align);

/// Gives a frame's block back to this thread's pool.
void give_back(void* block, std::size_t size) noexcept;

/// This thread's pool, for its counters (tests).
const FramePool& this_thread_pool();

}  // namespace awaitable_frames
}  // namespace ratelimitd

namespace boost::asio::detail {

template <>
inline void* thread_info_base::allocate<thread_info_base::awaitable_frame_tag>(awaitable_frame_tag, thread_info_base*,
                                                                              std::size_t size, std::size_t align) {
    return ratelimitd::awaitable_frames::take(size, align);
}

template <>
inline void thread_info_base::deallocate<thread_info_base::awaitable_frame_tag>(awaitable_frame_tag,
                                                                               thread_info_base*, void* pointer,
                                                                               std::size_t size) {
    ratelimitd::awaitable_frames::give_back(pointer, size);
}

}  // namespace boost::asio::detail
