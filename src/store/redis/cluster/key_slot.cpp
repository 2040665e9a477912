// CRC16/XMODEM and hash tags, as in Redis's cluster.c keyHashSlot().
#include "ratelimitd/store/redis/cluster/key_slot.hpp"

#include <array>

namespace ratelimitd::store::redis::cluster {

namespace {

constexpr std::array<std::uint16_t, 256> make_table() {
    std::array<std::uint16_t, 256> t{};
    for (unsigned i = 0; i < 256; ++i) {
        auto crc = static_cast<std::uint16_t>(i << 8);
        for (int bit = 0; bit < 8; ++bit) {
            crc = static_cast<std::uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
        }
        t[i] = crc;
    }
    return t;
}

constexpr auto table = make_table();

}  // namespace

std::uint16_t crc16(std::string_view data) noexcept {
    std::uint16_t crc = 0;
    for (unsigned char b : data) {
        crc = static_cast<std::uint16_t>((crc << 8) ^ table[((crc >> 8) ^ b) & 0xff]);
    }
    return crc;
}

std::string_view hash_tag(std::string_view key) noexcept {
    const auto open = key.find('{');
    if (open == std::string_view::npos) return key;
    const auto close = key.find('}', open + 1);
    if (close == std::string_view::npos || close == open + 1) return key;
    return key.substr(open + 1, close - open - 1);
}

int key_slot(std::string_view key) noexcept { return crc16(hash_tag(key)) & (slot_count - 1); }

}  // namespace ratelimitd::store::redis::cluster
