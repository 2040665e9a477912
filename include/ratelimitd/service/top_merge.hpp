// Merging Space-Saving sketches (of several threads and time slices) into one ranking.
#pragma once

#include "ratelimitd/service/space_saving.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ratelimitd::service {

/// One tenant of a merged ranking: its true sum lies in [count - error, count].
struct RankedTenant {
    std::string tenant;
    std::uint64_t count = 0;
    std::uint64_t error = 0;

    bool operator==(const RankedTenant&) const = default;
};

/// The `n` largest counts over `sketches`, largest first (ties by tenant name). A tenant that
/// one sketch did not keep may have had up to that sketch's floor() there, so that floor is
/// added to both its count and its error: each count stays an upper bound and count - error
/// a lower bound, and when no sketch was full the ranking is exact.
std::vector<RankedTenant> merge_top(std::span<const SpaceSaving> sketches, std::size_t n);

}  // namespace ratelimitd::service
