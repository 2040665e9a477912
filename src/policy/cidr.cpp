// CIDR parsing and matching on top of inet_pton.
#include "ratelimitd/policy/cidr.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace ratelimitd::policy {
namespace {

constexpr std::uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

struct Address {
    bool v6 = false;
    std::array<std::uint8_t, 16> bytes{};
};

/// inet_pton wants a NUL-terminated string; copy into a bounded buffer instead of allocating.
std::optional<Address> parse_address(std::string_view text) noexcept {
    char buf[INET6_ADDRSTRLEN + 1];
    if (text.empty() || text.size() >= sizeof buf) return std::nullopt;
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';

    Address a;
    a.v6 = text.find(':') != std::string_view::npos;
    if (inet_pton(a.v6 ? AF_INET6 : AF_INET, buf, a.bytes.data()) != 1) return std::nullopt;
    return a;
}

/// Compares the first `bits` bits of two byte arrays.
bool same_prefix(const std::uint8_t* a, const std::uint8_t* b, int bits) noexcept {
    const int whole = bits / 8;
    if (std::memcmp(a, b, static_cast<std::size_t>(whole)) != 0) return false;
    const int rest = bits % 8;
    if (rest == 0) return true;
    const auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
    return (a[whole] & mask) == (b[whole] & mask);
}

}  // namespace

std::optional<Cidr> parse_cidr(std::string_view text) noexcept {
    const auto slash = text.find('/');
    const auto addr = parse_address(text.substr(0, slash));
    if (!addr) return std::nullopt;

    Cidr net;
    net.v6 = addr->v6;
    net.bytes = addr->bytes;
    const int max_len = net.v6 ? 128 : 32;
    net.prefix_len = max_len;
    if (slash != std::string_view::npos) {
        const auto digits = text.substr(slash + 1);
        if (digits.empty() || digits.size() > 3) return std::nullopt;
        int len = 0;
        for (const char c : digits) {
            if (c < '0' || c > '9') return std::nullopt;
            len = len * 10 + (c - '0');
        }
        if (len > max_len) return std::nullopt;
        net.prefix_len = len;
    }

    // "::ffff:10.0.0.1/128" is the IPv4 network 10.0.0.1/32, as peers are canonicalised (a
    // dual-stack socket's IPv4 peer arrives as that mapped form and is matched as IPv4).
    if (net.v6 && net.prefix_len >= 96 && std::memcmp(net.bytes.data(), v4_mapped, sizeof v4_mapped) == 0) {
        net.v6 = false;
        std::memmove(net.bytes.data(), net.bytes.data() + 12, 4);
        std::memset(net.bytes.data() + 4, 0, 12);
        net.prefix_len -= 96;
    }

    // Store the network address so that equal networks compare equal byte for byte.
    const int max_len_now = net.v6 ? 128 : 32;
    for (int bit = net.prefix_len; bit < max_len_now; ++bit) {
        net.bytes[static_cast<std::size_t>(bit / 8)] &=
            static_cast<std::uint8_t>(~(0x80 >> (bit % 8)));
    }
    return net;
}

bool cidr_contains(const Cidr& net, std::string_view ip) noexcept {
    const auto addr = parse_address(ip);
    if (!addr) return false;
    if (net.v6) {
        return addr->v6 && same_prefix(addr->bytes.data(), net.bytes.data(), net.prefix_len);
    }
    if (!addr->v6) return same_prefix(addr->bytes.data(), net.bytes.data(), net.prefix_len);

    if (std::memcmp(addr->bytes.data(), v4_mapped, sizeof v4_mapped) != 0) return false;
    return same_prefix(addr->bytes.data() + 12, net.bytes.data(), net.prefix_len);
}

}  // namespace ratelimitd::policy
