// field_pool recycles header-field blocks per thread; messages carry it.
#include "ratelimitd/http/field_allocator.hpp"
#include "ratelimitd/http/types.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace ratelimitd::http {
namespace {

TEST(FieldAllocator, AFreedBlockServesTheNextRequestOfItsClass) {
    void* a = field_pool::allocate(100);
    field_pool::deallocate(a, 100);
    void* b = field_pool::allocate(90);  // same class (up to 128 bytes)
    EXPECT_EQ(a, b);
    field_pool::deallocate(b, 90);
}

TEST(FieldAllocator, ABlockFreedOnAnotherThreadIsKeptThere) {
    void* a = field_pool::allocate(200);
    std::thread([a] {
        field_pool::deallocate(a, 200);
        void* again = field_pool::allocate(200);
        EXPECT_EQ(again, a);
        field_pool::deallocate(again, 200);
    }).join();  // the thread's lists are freed when it ends: ASan would report a leak
}

TEST(FieldAllocator, MessagesUseItAndStillCopyAndMove) {
    Response a{bhttp::status::ok, 11};
    a.set("X-One", "1");
    a.set(bhttp::field::content_type, "application/json");
    Response b = a;
    Response c = std::move(a);
    EXPECT_EQ(b["X-One"], "1");
    EXPECT_EQ(c[bhttp::field::content_type], "application/json");
    FieldAllocator<int> x;
    FieldAllocator<char> y(x);
    EXPECT_TRUE(x == y);
}

}  // namespace
}  // namespace ratelimitd::http
