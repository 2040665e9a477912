// The allocator of every request's and response's header fields: blocks recycled per thread.
#pragma once

#include <cstddef>
#include <type_traits>

namespace ratelimitd::http {

namespace field_pool {

/// A block of at least `bytes`, from this thread's free list of its size class when one is
/// there, else from operator new. Blocks over the largest class go straight to operator new.
void* allocate(std::size_t bytes);

/// Gives `p` (allocated with the same `bytes`) back to this thread's free list, or to
/// operator delete when that list is full or the thread is ending.
void deallocate(void* p, std::size_t bytes) noexcept;

}  // namespace field_pool

/// Beast's basic_fields allocates one block per header line (its list and set node, name and
/// value together): about 13 allocations per check, for blocks of a few sizes that are freed
/// again within microseconds. This allocator hands those blocks back to a per-thread free
/// list, as Asio's recycling allocator does for coroutine frames, so a steady request loop
/// stops calling malloc for its headers. Stateless: any two instances are interchangeable,
/// so messages move between sessions and threads without copying their fields.
template <class T>
class FieldAllocator {
public:
    using value_type = T;
    using is_always_equal = std::true_type;

    FieldAllocator() noexcept = default;
    template <class U>
    FieldAllocator(const FieldAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit by design

    T* allocate(std::size_t n) { return static_cast<T*>(field_pool::allocate(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) noexcept { field_pool::deallocate(p, n * sizeof(T)); }

    template <class U>
    bool operator==(const FieldAllocator<U>&) const noexcept {
        return true;
    }
};

}  // namespace ratelimitd::http
