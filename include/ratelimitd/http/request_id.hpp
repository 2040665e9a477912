// Request ids for responses whose caller sent none: cheap, per thread, no lock.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace ratelimitd::http {

/// Every generated id is this many lower-case hex digits.
inline constexpr std::size_t request_id_length = 16;

/// Writes the next id of this thread into `out`. Each thread walks its own sequence: a
/// 64-bit start drawn from std::random_device once per thread, stepped by a constant and
/// passed through a bijective mixer (splitmix64). So a thread never repeats an id within
/// 2^64 of them, and two threads or two sidecars collide no more often than two random
/// 64-bit numbers do. Never throws after the first call on a thread.
void next_request_id(std::span<char, request_id_length> out) noexcept;

/// The same, as a string.
std::string new_request_id();

}  // namespace ratelimitd::http
