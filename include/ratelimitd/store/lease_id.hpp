// Lease ids of concurrency limits: what a worker shows to free its slot (POST /v1/release).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ratelimitd::store {

/// Hex digits of a lease id: 128 random bits.
inline constexpr std::size_t lease_id_length = 32;

/// A fresh lease id: 128 bits from the kernel's random source (getrandom), as 32 lower-case
/// hex digits. Unguessable, so one tenant cannot release another's slot by trying ids; a
/// counter or a per-process seed would be. Never throws (aborts
/// when the kernel gives no randomness at all, since a guessable id would open the limit).
std::string new_lease_id();

/// Whether `text` has the shape new_lease_id() writes (32 lower-case hex digits).
bool is_lease_id(std::string_view text) noexcept;

}  // namespace ratelimitd::store
