// Which of Redis Cluster's 16384 hash slots a key lives in (CRC16/XMODEM, `{tag}` honoured).
#pragma once

#include <cstdint>
#include <string_view>

namespace ratelimitd::store::redis::cluster {

inline constexpr int slot_count = 16384;

/// CRC16/XMODEM (polynomial 0x1021, initial value 0), the checksum Redis Cluster hashes keys
/// with: crc16("123456789") == 0x31C3.
std::uint16_t crc16(std::string_view data) noexcept;

/// The part of `key` that is hashed: the bytes between the first '{' and the first '}' after
/// it when that is not empty, else the whole key (cluster spec, "Hash tags").
std::string_view hash_tag(std::string_view key) noexcept;

/// The slot of `key`, 0..16383, as CLUSTER KEYSLOT answers.
int key_slot(std::string_view key) noexcept;

}  // namespace ratelimitd::store::redis::cluster
