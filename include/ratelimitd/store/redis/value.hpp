// A Redis reply, owned: ValueReader builds it as the bytes are parsed.
#pragma once

#include <boost/asio/recycling_allocator.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

/// The allocator of a reply's members. A check's reply is one array of a few integers, made
/// and freed on the connection's thread once per check: an array that fits the blocks Asio's
/// recycling allocator keeps per thread (Boost 1.81: up to 1,020 bytes) is taken from them;
/// a larger one (a big batch's) from the heap, so it never pushes a kept block out.
template <class T>
struct ReplyAllocator {
    using value_type = T;
    static constexpr std::size_t recycled_bytes = 1020;

    ReplyAllocator() noexcept = default;
    template <class U>
    ReplyAllocator(const ReplyAllocator<U>&) noexcept {}  // implicit: rebound copies convert

    T* allocate(std::size_t n) {
        if (n * sizeof(T) <= recycled_bytes) return boost::asio::recycling_allocator<T>().allocate(n);
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) <= recycled_bytes) boost::asio::recycling_allocator<T>().deallocate(p, n);
        else std::allocator<T>().deallocate(p, n);
    }
    template <class U>
    bool operator==(const ReplyAllocator<U>&) const noexcept { return true; }
};

struct Value {
    /// integers: an array read flat (ValueReader::expect_integers, lua/batch.lua's reply): its
    /// integer members in `integers`, without a Value each; any other member (a check's error)
    /// in `elements`, with its position in the array as its `integer`, and 0 in its place in
    /// `integers`.
    enum class Type { nil, integer, string, status, error, array, integers };
    Type type = Type::nil;
    std::int64_t integer = 0;
    std::string str;                                     ///< string, status and error text
    std::vector<Value, ReplyAllocator<Value>> elements;  ///< array members
    std::vector<std::int64_t, ReplyAllocator<std::int64_t>> integers;  ///< a flat array's members

    [[nodiscard]] bool is_error() const noexcept { return type == Type::error; }
};

}  // namespace ratelimitd::store::redis
