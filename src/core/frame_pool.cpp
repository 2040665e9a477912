#include "ratelimitd/core/frame_pool.hpp"

#include <cstdlib>
#include <new>

namespace ratelimitd {
namespace {

constexpr std::size_t largest_kept = FramePool::granule * FramePool::classes;

/// The list a block of `size` bytes belongs to: class c holds blocks of (c + 1) * granule.
constexpr std::size_t class_of(std::size_t size) {
    return size == 0 ? 0 : (size - 1) / FramePool::granule;
}

void* checked(void* block) {
    if (block == nullptr) throw std::bad_alloc();
    return block;
}

}  // namespace

void* FramePool::allocate(std::size_t size, std::size_t align) {
    if (align > alignof(std::max_align_t)) {
        // As large as its class (release may keep it there), a multiple of the alignment
        // (aligned_alloc wants one); std::free takes it back.
        const std::size_t bytes = size > largest_kept ? size : (class_of(size) + 1) * granule;
        return checked(std::aligned_alloc(align, (bytes + align - 1) / align * align));
    }
    if (size > largest_kept) return checked(std::malloc(size));
    const std::size_t c = class_of(size);
    if (FreeBlock* block = heads_[c]) {
        heads_[c] = block->next;
        kept_bytes_ -= (c + 1) * granule;
        ++reused_;
        return block;
    }
    ++fresh_;
    return checked(std::malloc((c + 1) * granule));
}

void FramePool::release(void* block, std::size_t size) noexcept {
    if (block == nullptr) return;
    const std::size_t bytes = (class_of(size) + 1) * granule;
    if (closed_ || size > largest_kept || kept_bytes_ + bytes > kept_bytes_bound) {
        std::free(block);
        return;
    }
    const std::size_t c = class_of(size);
    heads_[c] = ::new (block) FreeBlock{heads_[c]};
    kept_bytes_ += bytes;
}

void FramePool::drain() noexcept {
    for (FreeBlock*& head : heads_) {
        while (head != nullptr) {
            FreeBlock* next = head->next;
            std::free(head);
            head = next;
        }
    }
    kept_bytes_ = 0;
}

}  // namespace ratelimitd
