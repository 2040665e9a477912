#pragma once

#include <chrono>

namespace ratelimitd::test {

/// The instant the RLS planner tests plan at: 2025-12-01T12:34:56Z (mid-minute, so a window
/// start and a reset differ from it).
inline const auto noon = std::chrono::system_clock::time_point(std::chrono::seconds(1764592496));

}  // namespace ratelimitd::test
