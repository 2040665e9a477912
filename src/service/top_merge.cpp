// merge_top: counts and errors summed per tenant, with the floors of the sketches that lack it.
#include "ratelimitd/service/top_merge.hpp"

#include <algorithm>
#include <unordered_map>

namespace ratelimitd::service {

std::vector<RankedTenant> merge_top(std::span<const SpaceSaving> sketches, std::size_t n) {
    // Every tenant starts from the sum of all floors; a sketch that keeps it replaces its
    // floor there by its own numbers (count >= floor always, error may be below it).
    std::uint64_t floors = 0;
    struct Sum {
        std::int64_t count = 0;
        std::int64_t error = 0;
    };
    std::unordered_map<std::string_view, Sum> sums;
    for (const SpaceSaving& s : sketches) {
        const auto floor = static_cast<std::int64_t>(s.floor());
        floors += s.floor();
        for (const auto& e : s.entries()) {
            Sum& sum = sums[e.tenant];
            sum.count += static_cast<std::int64_t>(e.count) - floor;
            sum.error += static_cast<std::int64_t>(e.error) - floor;
        }
    }
    std::vector<RankedTenant> ranked;
    ranked.reserve(sums.size());
    const auto base = static_cast<std::int64_t>(floors);
    for (const auto& [tenant, sum] : sums) {
        ranked.push_back({std::string(tenant), static_cast<std::uint64_t>(base + sum.count),
                          static_cast<std::uint64_t>(base + sum.error)});
    }
    const auto by_count = [](const RankedTenant& a, const RankedTenant& b) {
        return a.count != b.count ? a.count > b.count : a.tenant < b.tenant;
    };
    const std::size_t keep = std::min(n, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(), by_count);
    ranked.resize(keep);
    return ranked;
}

}  // namespace ratelimitd::service
