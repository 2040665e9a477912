// field_pool: per-thread free lists in a few size classes for header-field blocks.
#include "ratelimitd/http/field_allocator.hpp"

#include <array>
#include <new>
#include <utility>

namespace ratelimitd::http::field_pool {

namespace {

// A field block is Beast's node (about 64 bytes) plus name and value: a check's fields fall
// in the first two classes. Larger ones (a long cookie) are rare enough to leave to malloc.
constexpr std::array<std::size_t, 4> class_bytes{128, 256, 512, 1024};

// Bounds what one thread keeps for reuse (at most about 500 KiB), so a burst of huge
// requests does not pin memory for the life of the thread.
constexpr std::size_t kept_per_class = 256;

struct FreeBlock {
    FreeBlock* next;
};

int class_of(std::size_t bytes) noexcept {
    for (std::size_t i = 0; i < class_bytes.size(); ++i) {
        if (bytes <= class_bytes[i]) return static_cast<int>(i);
    }
    return -1;
}

enum class Life : unsigned char { unborn, alive, dead };

class FreeLists {
public:
    FreeLists() noexcept { life = Life::alive; }
    ~FreeLists() {
        life = Life::dead;  // blocks freed later in this thread's exit go straight to delete
        for (FreeBlock*& head : heads_) {
            while (head != nullptr) ::operator delete(std::exchange(head, head->next));
        }
    }
    FreeLists(const FreeLists&) = delete;
    FreeLists& operator=(const FreeLists&) = delete;

    void* pop(int c) noexcept {
        FreeBlock*& head = heads_[static_cast<std::size_t>(c)];
        if (head == nullptr) return nullptr;
        --counts_[static_cast<std::size_t>(c)];
        return std::exchange(head, head->next);
    }

    bool push(int c, void* p) noexcept {
        auto& count = counts_[static_cast<std::size_t>(c)];
        if (count >= kept_per_class) return false;
        ++count;
        auto* block = static_cast<FreeBlock*>(p);
        block->next = heads_[static_cast<std::size_t>(c)];
        heads_[static_cast<std::size_t>(c)] = block;
        return true;
    }

    // Trivially destructible, so it is still readable while other thread_locals are torn down.
    static thread_local Life life;

private:
    std::array<FreeBlock*, class_bytes.size()> heads_{};
    std::array<std::size_t, class_bytes.size()> counts_{};
};

thread_local Life FreeLists::life = Life::unborn;

FreeLists& lists() {
    static thread_local FreeLists instance;
    return instance;
}

}  // namespace

void* allocate(std::size_t bytes) {
    const int c = class_of(bytes);
    if (c < 0) return ::operator new(bytes);
    if (FreeLists::life != Life::dead) {
        if (void* p = lists().pop(c)) return p;
    }
    // Always the class's full size, even while the thread ends: any thread may later keep
    // the block in its list of that class and hand it out for the class's largest request.
    return ::operator new(class_bytes[static_cast<std::size_t>(c)]);
}

void deallocate(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    const int c = class_of(bytes);
    if (c >= 0 && FreeLists::life != Life::dead && lists().push(c, p)) return;
    ::operator delete(p);
}

}  // namespace ratelimitd::http::field_pool
