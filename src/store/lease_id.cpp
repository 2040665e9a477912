// Lease ids from the kernel's random source.
#include "ratelimitd/store/lease_id.hpp"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace ratelimitd::store {
namespace {

// 16 random bytes. getrandom blocks only before the kernel's pool is first seeded (early
// boot), which is the right behaviour for an id that guards a slot.
std::array<std::uint8_t, lease_id_length / 2> random_bytes() {
    std::array<std::uint8_t, lease_id_length / 2> bytes{};
    std::size_t got = 0;
    while (got < bytes.size()) {
        const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
        if (n > 0) {
            got += static_cast<std::size_t>(n);
        } else if (n < 0 && errno != EINTR) {
            std::fputs("ratelimitd: getrandom failed; refusing to issue guessable lease ids\n", stderr);
            std::abort();
        }
    }
    return bytes;
}

}  // namespace

std::string new_lease_id() {
    static constexpr char digits[] = "0123456789abcdef";
    std::string id;
    id.reserve(lease_id_length);
    for (const std::uint8_t b : random_bytes()) {
        id.push_back(digits[b >> 4]);
        id.push_back(digits[b & 0x0f]);
    }
    return id;
}

bool is_lease_id(std::string_view text) noexcept {
    if (text.size() != lease_id_length) return false;
    for (const char c : text) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

}  // namespace ratelimitd::store
