// Round robin over the server threads, for calls that arrive on gRPC's own threads.
#pragma once

#include "ratelimitd/grpc/service_lane.hpp"

#include <atomic>
#include <cstddef>
#include <vector>

namespace ratelimitd::rls {

/// Hands out the lanes in turn, so calls spread over every server thread as HTTP
/// connections do.
/// @par Thread Safety
/// next() may be called from any thread.
class LaneRing {
public:
    /// Precondition: `lanes` is not empty.
    explicit LaneRing(std::vector<ServiceLane> lanes) : lanes_(std::move(lanes)) {}

    const ServiceLane& next() noexcept {
        return lanes_[next_.fetch_add(1, std::memory_order_relaxed) % lanes_.size()];
    }

private:
    std::vector<ServiceLane> lanes_;
    std::atomic<std::size_t> next_{0};
};

}  // namespace ratelimitd::rls
