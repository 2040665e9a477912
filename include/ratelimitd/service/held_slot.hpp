// One held /v1/auth answer's place among the process's (DelayMetrics::try_hold): given back
// when its owner goes. Move-only, so exactly one owner gives it back; moving it is a pointer
// copy, which keeps the answers that are never held as cheap as before.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace ratelimitd::service {

struct GiveBackHeldSlot {
    void operator()(std::atomic<std::int64_t>* held) const noexcept { held->fetch_sub(1, std::memory_order_relaxed); }
};

using HeldSlot = std::unique_ptr<std::atomic<std::int64_t>, GiveBackHeldSlot>;

}  // namespace ratelimitd::service
