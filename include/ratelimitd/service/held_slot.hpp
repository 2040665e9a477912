// One held /v1/auth answer's places (DelayMetrics::try_hold): among the process's held answers
// and among its delaying policies', given back when its owner goes. Move-only, so exactly one
// owner gives them back; moving it is a pointer copy, which keeps the answers that are never
// held as cheap as before (only a held answer allocates its places).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace ratelimitd::service {

/// The counters one held answer counts in: the process's, and one per policy with max_held
/// that delayed it. The counters outlive every slot (DelayMetrics and PolicyHolds never
/// drop one).
struct HeldPlaces {
    std::atomic<std::int64_t>* process = nullptr;
    std::vector<std::atomic<std::int64_t>*> policies;
};

struct GiveBackHeldSlot {
    void operator()(HeldPlaces* places) const noexcept {
        places->process->fetch_sub(1, std::memory_order_relaxed);
        for (auto* held : places->policies) held->fetch_sub(1, std::memory_order_relaxed);
        delete places;
    }
};

using HeldSlot = std::unique_ptr<HeldPlaces, GiveBackHeldSlot>;

}  // namespace ratelimitd::service
